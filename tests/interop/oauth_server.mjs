// A real OAuth 2.0 / OpenID Connect authorization server for the desk's sign-in tests:
// oauth2-mock-server (npm) on 127.0.0.1 at a free port, approving every authorization at
// once. The test decides who the next person to sign in is (POST /test/person), and reads
// how many refreshes happened (GET /test/stats); tokens carry that person's `sub`, scopes
// and claims, with the audience the client asked for (RFC 8707 `resource`).
//
//   node oauth_server.mjs PREFIX             → prints {"issuer": "http://127.0.0.1:PORT"} on its first line
//   node oauth_server.mjs PREFIX KEY CERT    → the same over HTTPS ({"issuer": "https://…"}), with the
//                                              PEM key and certificate in the files KEY and CERT
// where PREFIX is the npm prefix oauth2-mock-server is installed under (scripts/interop-setup.sh).
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = join(process.argv[2], 'node_modules', 'oauth2-mock-server', 'dist', 'index.mjs');
const { OAuth2Server } = await import(pathToFileURL(root).href);

const [key, cert] = process.argv.slice(3);
const server = new OAuth2Server(key, cert);
await server.issuer.keys.generate('RS256');
let next = { sub: 'nobody', scope: '', claims: {} };
const byCode = new Map();
const byRefresh = new Map();
const stats = {
  authorizations: 0, codes: 0, refreshes: 0, refusedRefreshes: 0,
  revocations: 0, revokedRefreshTokens: 0, revokedBy: [],
};

const personFor = (body) => {
  if (body.grant_type === 'authorization_code') return byCode.get(body.code);
  if (body.grant_type === 'refresh_token') return byRefresh.get(body.refresh_token);
  return undefined;
};

server.service.on('beforeAuthorizeRedirect', (redirect) => {
  stats.authorizations += 1;
  const code = redirect.url.searchParams.get('code');
  if (code) byCode.set(code, next);
});
server.service.on('beforeTokenSigning', (token, req) => {
  const person = personFor(req.body ?? {});
  if (!person) return;
  Object.assign(token.payload, person.claims, { sub: person.sub, scope: person.scope });
  if (req.body.resource) token.payload.aud = req.body.resource;
});
server.service.on('beforeResponse', (response, req) => {
  const body = req.body ?? {};
  const person = personFor(body);
  if (!person && body.grant_type === 'refresh_token') {
    // A refresh token this server never issued, or revoked: as a real one answers.
    response.statusCode = 400;
    response.body = { error: 'invalid_grant', error_description: 'the refresh token is not valid' };
    stats.refusedRefreshes += 1;
    return;
  }
  if (!person) return;
  if (body.grant_type === 'authorization_code') stats.codes += 1;
  if (body.grant_type === 'refresh_token') stats.refreshes += 1;
  response.body.scope = person.scope;
  if (response.body.refresh_token) byRefresh.set(response.body.refresh_token, person);
});

server.service.addRoute('POST', '/test/person', (req, res) => {
  next = { sub: req.body.sub, scope: req.body.scope ?? '', claims: req.body.claims ?? {} };
  res.writeHead(204).end();
});
// Every refresh token issued so far stops working (a revoked grant).
server.service.addRoute('POST', '/test/revoke', (_req, res) => {
  byRefresh.clear();
  res.writeHead(204).end();
});
// Revocation (RFC 7009). The package's own POST /revoke answers 200 and forgets nothing, so
// the metadata names this endpoint instead: a revoked refresh token stops working.
server.service.on('beforeWellKnownOpenIdConfiguration', (response) => {
  response.body.revocation_endpoint = `${server.issuer.url}/test/revocation`;
});
server.service.addRoute('POST', '/test/revocation', (req, res) => {
  const form = req.body ?? {};
  stats.revocations += 1;
  stats.revokedBy.push(form.client_id ?? null);
  if (byRefresh.delete(form.token)) stats.revokedRefreshTokens += 1;
  res.writeHead(200).end();
});
server.service.addRoute('GET', '/test/stats', (_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(stats));
});
// A token for anyone and any audience, signed with the issuer's own key.
server.service.addRoute('POST', '/test/token', async (req, res) => {
  const { sub, aud, scope, nbf } = req.body;
  const token = await server.issuer.buildToken({
    scopesOrTransform: (_header, payload) =>
      Object.assign(payload, { sub, aud, scope }, nbf === undefined ? {} : { nbf }),
  });
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ token }));
});

await server.start(0, '127.0.0.1');
// The address it listens on, not `localhost` (which may resolve to ::1 first).
server.issuer.url = `${key ? 'https' : 'http'}://127.0.0.1:${server.address().port}`;
process.stdout.write(JSON.stringify({ issuer: server.issuer.url }) + '\n');
process.stdin.resume();
process.stdin.on('end', () => server.stop().then(() => process.exit(0)));
