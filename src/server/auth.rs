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

/// The shortest token a token file may hold, in bytes.
const MIN_TOKEN_LEN: usize = 16;

/// What is wrong with a token file's text.
#[derive(Debug, PartialEq, Eq)]
enum TokenFileError {
    /// No line holds a token.
    Empty,
    /// The token on this line (1-based) is shorter than [`MIN_TOKEN_LEN`].
    Short { line: usize },
}

/// Who may call the API.
#[derive(Debug, Clone)]
pub enum Auth {
    /// Everyone (loopback, or `--insecure-no-auth`).
    Open,
    /// Requests with `Authorization: Bearer TOKEN` for one of these tokens.
    Tokens(Vec<Vec<u8>>),
}

impl Auth {
    /// Reads the tokens of `path`: one per line, surrounding spaces ignored; blank lines and
    /// lines whose first non-space character is `#` (comments) are skipped.
    ///
    /// # Errors
    /// The file cannot be read, or holds no token, or a token shorter than 16 bytes (the
    /// message names the file and the line).
    pub fn from_file(path: &Path) -> anyhow::Result<Auth> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the token file {}", path.display()))?;
        Auth::parse(&text).map_err(|e| match e {
            TokenFileError::Empty => anyhow::anyhow!(
                "the token file {} holds no token: write one per line (e.g. `openssl rand -hex 32 > {}`); \
                 blank lines and lines starting with # are ignored",
                path.display(),
                path.display()
            ),
            TokenFileError::Short { line } => anyhow::anyhow!(
                "line {line} of the token file {} is shorter than 16 characters: use a long random \
                 token (e.g. `openssl rand -hex 32`), or start the line with # to make it a comment",
                path.display()
            ),
        })
    }

    /// The tokens of a token file's text (see [`Auth::from_file`]).
    fn parse(text: &str) -> Result<Auth, TokenFileError> {
        let mut tokens = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if line.len() < MIN_TOKEN_LEN {
                return Err(TokenFileError::Short { line: i + 1 });
            }
            tokens.push(line.as_bytes().to_vec());
        }
        if tokens.is_empty() {
            return Err(TokenFileError::Empty);
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

    fn tokens(text: &str) -> Vec<Vec<u8>> {
        match Auth::parse(text) {
            Ok(Auth::Tokens(t)) => t,
            other => panic!("expected tokens, got {other:?}"),
        }
    }

    #[test]
    fn comments_and_blank_lines_are_not_tokens() {
        let text = "# tokens for the crawler fleet, rotate monthly\n\n  0123456789abcdef  \n   # an indented comment\n\t\nfedcba9876543210xx\n";
        assert_eq!(
            tokens(text),
            vec![b"0123456789abcdef".to_vec(), b"fedcba9876543210xx".to_vec()]
        );
        let auth = Auth::parse(text).unwrap();
        assert!(!auth.allows(Some(
            b"Bearer # tokens for the crawler fleet, rotate monthly"
        )));
        assert!(auth.allows(Some(b"Bearer 0123456789abcdef")));
    }

    #[test]
    fn a_short_token_names_its_line() {
        assert_eq!(
            Auth::parse("# fleet\n0123456789abcdef\n\nshort\n").err(),
            Some(TokenFileError::Short { line: 4 })
        );
        assert_eq!(
            Auth::parse("# only a comment\n\n").err(),
            Some(TokenFileError::Empty)
        );
    }

    #[test]
    fn file_errors_name_the_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tokens");
        std::fs::write(&path, "# fleet\n0123456789abcdef\nshort-one\n").unwrap();
        let message = format!("{:#}", Auth::from_file(&path).unwrap_err());
        assert!(message.contains("line 3 of the token file"), "{message}");
        assert!(message.contains(&path.display().to_string()), "{message}");
        std::fs::write(&path, "# nothing yet\n").unwrap();
        let message = format!("{:#}", Auth::from_file(&path).unwrap_err());
        assert!(message.contains("holds no token"), "{message}");
        std::fs::write(&path, "# fleet\n0123456789abcdef\n").unwrap();
        assert!(matches!(Auth::from_file(&path), Ok(Auth::Tokens(t)) if t.len() == 1));
    }
}
