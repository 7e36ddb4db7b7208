//! The same guard for Streamable HTTP: rmcp's client stops a POST's event stream with an error
//! when one event is over its size limit (and refuses an over-long JSON body), which the
//! transport takes for a lost connection. [`SizeGuarded`] answers the request that POST carried
//! with a JSON-RPC error saying the answer was too large, and the connection goes on.

use std::collections::HashMap;
use std::sync::Arc;

use axum::http::{HeaderName, HeaderValue};
use futures_core::stream::BoxStream;
use futures_util::StreamExt;
use rmcp::model::{ClientJsonRpcMessage, RequestId, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};

use crate::wire::oversize::{TOO_LARGE_CODE, too_large_message};

/// An HTTP client whose answers over the size limit become errors for their request.
#[derive(Clone)]
pub struct SizeGuarded<C>(pub C);

type Error<C> = StreamableHttpError<<C as StreamableHttpClient>::Error>;

impl<C: StreamableHttpClient + Sync> StreamableHttpClient for SizeGuarded<C> {
    type Error = C::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, Error<C>> {
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            StreamableHttpResponseLimits::default(),
        )
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, Error<C>> {
        let mut limits = StreamableHttpResponseLimits::default();
        limits.max_sse_event_size = max_sse_event_size;
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits,
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, Error<C>> {
        let id = match &message {
            ClientJsonRpcMessage::Request(request) => Some(request.id.clone()),
            _ => None,
        };
        let answer = self
            .0
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await;
        let Some(id) = id else { return answer };
        match answer {
            Ok(StreamableHttpPostResponse::Sse(events, session)) => {
                let max = limits.max_sse_event_size;
                let events = events.map(move |event| match event {
                    Err(error) if event_too_large(&error) => Ok(error_event(&id, max)),
                    other => other,
                });
                Ok(StreamableHttpPostResponse::Sse(events.boxed(), session))
            }
            Err(StreamableHttpError::ResponseBodyTooLarge { max_size }) => Ok(
                StreamableHttpPostResponse::Json(error_response(&id, max_size), None),
            ),
            other => other,
        }
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), Error<C>> {
        self.0
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<sse_stream::Sse, SseError>>, Error<C>> {
        self.0
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<sse_stream::Sse, SseError>>, Error<C>> {
        self.0
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await
    }
}

/// rmcp's event-size limiter says "SSE event exceeded the maximum size of N bytes" inside a
/// body error; its type is private, so its words are what can be known.
fn event_too_large(error: &SseError) -> bool {
    matches!(error, SseError::Body(inner) if inner.to_string().contains("exceeded the maximum size"))
}

fn error_response(id: &RequestId, max: usize) -> ServerJsonRpcMessage {
    ServerJsonRpcMessage::error(
        rmcp::model::ErrorData::new(
            rmcp::model::ErrorCode(TOO_LARGE_CODE),
            too_large_message(None, max),
            None,
        ),
        Some(id.clone()),
    )
}

fn error_event(id: &RequestId, max: usize) -> sse_stream::Sse {
    sse_stream::Sse {
        event: Some("message".to_owned()),
        data: serde_json::to_string(&error_response(id, max)).ok(),
        id: None,
        retry: None,
    }
}
