-- The shop's record in PostgreSQL: the same tables as the SQLite file, in a schema of their
-- own, so that the shop may share a database with the desk's record. Run at every start, by
-- every replica, under the setup lock: everything here is idempotent.
CREATE SCHEMA IF NOT EXISTS shop;
CREATE TABLE IF NOT EXISTS shop.customers (
    customer_id text PRIMARY KEY,
    name        text NOT NULL,
    email       text NOT NULL
);
CREATE TABLE IF NOT EXISTS shop.orders (
    order_id    text PRIMARY KEY,
    customer_id text NOT NULL REFERENCES shop.customers (customer_id),
    placed_on   text NOT NULL,
    status      text NOT NULL,
    doc         text NOT NULL
);
CREATE INDEX IF NOT EXISTS orders_by_customer ON shop.orders (customer_id);
CREATE TABLE IF NOT EXISTS shop.quotes (
    seq          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    quote_id     text NOT NULL UNIQUE,
    order_id     text NOT NULL REFERENCES shop.orders (order_id),
    sku          text,
    amount_cents bigint NOT NULL,
    reason       text NOT NULL,
    created_at   bigint NOT NULL
);
CREATE INDEX IF NOT EXISTS quotes_by_line ON shop.quotes (order_id, sku);
CREATE TABLE IF NOT EXISTS shop.refunds (
    seq          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    quote_id     text NOT NULL UNIQUE REFERENCES shop.quotes (quote_id),
    order_id     text NOT NULL REFERENCES shop.orders (order_id),
    sku          text,
    amount_cents bigint NOT NULL,
    status       text NOT NULL CHECK (status IN ('held', 'released')),
    issued_by    text,
    released_by  text,
    note         text,
    created_at   bigint NOT NULL,
    released_at  bigint
);
CREATE INDEX IF NOT EXISTS refunds_by_order ON shop.refunds (order_id, seq);
CREATE TABLE IF NOT EXISTS shop.release_asks (
    ask_id      text PRIMARY KEY,
    refund_seq  bigint NOT NULL REFERENCES shop.refunds (seq),
    asked_at    bigint NOT NULL,
    answer      text CHECK (answer IN ('released', 'declined')),
    answered_by text,
    answered_at bigint
);
CREATE INDEX IF NOT EXISTS release_asks_by_refund ON shop.release_asks (refund_seq);
CREATE TABLE IF NOT EXISTS shop.claims (
    claim_id        text PRIMARY KEY,
    order_id        text NOT NULL REFERENCES shop.orders (order_id),
    damage          text NOT NULL,
    amount_cents    bigint NOT NULL,
    filed_by        text,
    created_at_ms   bigint NOT NULL,
    review_ms       bigint NOT NULL,
    settle_ms       bigint NOT NULL,
    answer          text CHECK (answer IN ('approve', 'decline')),
    note            text,
    answered_by     text,
    answered_at_ms  bigint,
    cancelled_at_ms bigint
);
CREATE INDEX IF NOT EXISTS claims_by_order ON shop.claims (order_id, created_at_ms);
