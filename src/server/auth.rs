//! Bearer-token authentication: the tokens of `--token-file` (one per line, so a new one can
//! be added before the old one is retired), compared in constant time.

use std::path::Path;

use anyhow::Context;
use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use subtle::ConstantTimeEq;

use super::error::ApiError;
use super::state::AppState;

/// Who may call the API.
#[derive(Debug, Clone)]
pub enum Auth {
    /// Everyone (loopback, or `--insecure-no-auth`).
    Open,
    /// Requests with `Authorization: Bearer TOKEN` for one of these tokens.
    Tokens(Vec<Vec<u8>>),
}

impl Auth {
    /// Reads the tokens of `path`: one per line, blank lines and surrounding spaces ignored.
    ///
    /// # Errors
    /// The file cannot be read, or holds no token, or a token shorter than 16 bytes.
    pub fn from_file(path: &Path) -> anyhow::Result<Auth> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the token file {}", path.display()))?;
        let tokens: Vec<Vec<u8>> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(|l| l.as_bytes().to_vec())
            .collect();
        if tokens.is_empty() {
            anyhow::bail!(
                "the token file {} holds no token: write one per line (e.g. `openssl rand -hex 32 > {}`)",
                path.display(),
                path.display()
            );
        }
        if tokens.iter().any(|t| t.len() < 16) {
            anyhow::bail!(
                "a token in {} is shorter than 16 characters: use a long random one (e.g. `openssl rand -hex 32`)",
                path.display()
            );
        }
        Ok(Auth::Tokens(tokens))
    }

    /// Whether `authorization` (the header's value) names a valid token. Every token is
    /// compared, each in constant time, so the time taken says nothing about a token.
    pub fn allows(&self, authorization: Option<&[u8]>) -> bool {
        match self {
            Auth::Open => true,
            Auth::Tokens(tokens) => {
                let Some(given) = authorization.and_then(|v| v.strip_prefix(b"Bearer ")) else {
                    return false;
                };
                tokens
                    .iter()
                    .fold(0u8, |ok, t| ok | t.as_slice().ct_eq(given).unwrap_u8())
                    == 1
            }
        }
    }
}

/// Middleware: 401 unless the request carries a valid token.
pub async fn require_token(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .map(|v| v.as_bytes());
    if state.auth.allows(given) {
        return next.run(request).await;
    }
    let mut response = ApiError::new(
        StatusCode::UNAUTHORIZED,
        "unauthorized",
        "send the header `Authorization: Bearer TOKEN` with a token of the server's --token-file",
    )
    .into_response();
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        axum::http::HeaderValue::from_static("Bearer"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_listed_tokens_pass() {
        let auth = Auth::Tokens(vec![
            b"0123456789abcdef".to_vec(),
            b"fedcba9876543210xx".to_vec(),
        ]);
        assert!(auth.allows(Some(b"Bearer 0123456789abcdef")));
        assert!(auth.allows(Some(b"Bearer fedcba9876543210xx")));
        assert!(!auth.allows(Some(b"Bearer 0123456789abcdeF")));
        assert!(!auth.allows(Some(b"Bearer 0123456789abcde")));
        assert!(!auth.allows(Some(b"0123456789abcdef")));
        assert!(!auth.allows(None));
        assert!(Auth::Open.allows(None));
    }
}
