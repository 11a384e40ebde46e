//! What a PostgreSQL URL asks of the connection: the server's address and credentials
//! (tokio-postgres reads those) and TLS, in libpq's terms:
//!
//! - no `sslmode`, `sslmode=disable` or `sslmode=prefer`: plain TCP (a loopback or private
//!   network);
//! - `sslmode=require`, `verify-ca` or `verify-full`: TLS (rustls), refusing a server without
//!   it, with the server's certificate verified for its host name against the system's root
//!   certificates, or against those of the PEM file `sslrootcert=PATH` names (a managed
//!   provider's CA bundle, a private CA). All three verify fully, unlike libpq's `require`,
//!   which encrypts without checking whom to.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use percent_encoding::percent_decode_str;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use rustls::{ClientConfig, RootCertStore};
use tokio_postgres::config::SslMode;
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::error::{Error, Result};

/// A parsed URL: the client's configuration and, where TLS is required, the connector.
pub(super) struct Target {
    pub(super) config: tokio_postgres::Config,
    pub(super) tls: Option<MakeRustlsConnect>,
}

/// Parses `url` (`postgres://...` with query parameters, or libpq's `key=value` form).
///
/// # Errors
/// [`Error::InvalidArgument`] for a malformed URL, `sslrootcert` without TLS, or a root
/// certificate file that cannot be read or holds no certificate.
pub(super) fn parse(url: &str) -> Result<Target> {
    let (url, root_file) = take_tls_options(url)?;
    let mut config: tokio_postgres::Config = url
        .parse()
        .map_err(|e| Error::InvalidArgument(format!("PostgreSQL URL: {e}")))?;
    let tls = match config.get_ssl_mode() {
        SslMode::Require => Some(connector(root_file.as_deref())?),
        _ => {
            if root_file.is_some() {
                return Err(Error::InvalidArgument(
                    "PostgreSQL URL: sslrootcert is for TLS: add sslmode=verify-full (or require)"
                        .into(),
                ));
            }
            // `prefer` without a verified certificate would be TLS in name only: plain.
            config.ssl_mode(SslMode::Disable);
            None
        }
    };
    Ok(Target { config, tls })
}

/// `url` with `sslrootcert` taken out (tokio-postgres knows no such option) and
/// `sslmode=verify-full` or `verify-ca` read as `require` (every TLS connection is verified),
/// and the root certificate file named.
fn take_tls_options(url: &str) -> Result<(String, Option<PathBuf>)> {
    let Some((base, query)) = url.split_once('?') else {
        return Ok((url.to_owned(), None));
    };
    let mut kept = Vec::new();
    let mut root_file = None;
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        match key {
            "sslrootcert" => {
                let path = percent_decode_str(value).decode_utf8().map_err(|_| {
                    Error::InvalidArgument("PostgreSQL URL: sslrootcert is not UTF-8".into())
                })?;
                root_file = Some(PathBuf::from(path.as_ref()));
            }
            "sslmode" if value == "verify-full" || value == "verify-ca" => {
                kept.push("sslmode=require".to_owned())
            }
            _ => kept.push(pair.to_owned()),
        }
    }
    let url = match kept.is_empty() {
        true => base.to_owned(),
        false => format!("{base}?{}", kept.join("&")),
    };
    Ok((url, root_file))
}

/// A TLS connector that verifies the server against `root_file`'s certificates, or the
/// system's.
fn connector(root_file: Option<&Path>) -> Result<MakeRustlsConnect> {
    let mut roots = RootCertStore::empty();
    match root_file {
        Some(path) => {
            let certs = CertificateDer::pem_file_iter(path)
                .and_then(|certs| certs.collect::<std::result::Result<Vec<_>, _>>())
                .map_err(|e| {
                    Error::InvalidArgument(format!(
                        "PostgreSQL URL: cannot read the root certificates in sslrootcert {}: {e}",
                        path.display()
                    ))
                })?;
            let (added, _) = roots.add_parsable_certificates(certs);
            if added == 0 {
                return Err(Error::InvalidArgument(format!(
                    "PostgreSQL URL: sslrootcert {} holds no usable certificate",
                    path.display()
                )));
            }
        }
        None => {
            let found = rustls_native_certs::load_native_certs();
            roots.add_parsable_certificates(found.certs);
            if roots.is_empty() {
                return Err(Error::InvalidArgument(
                    "PostgreSQL URL: sslmode asks for TLS, but the system has no root \
                     certificates (install ca-certificates) and the URL names no sslrootcert"
                        .into(),
                ));
            }
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::InvalidArgument(format!("TLS to PostgreSQL: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(MakeRustlsConnect::new(config))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tls_options_are_read_and_taken_out() {
        let (url, root) = take_tls_options(
            "postgres://u@db:5432/x?sslmode=verify-full&sslrootcert=%2Fetc%2Fca.pem&application_name=a",
        )
        .unwrap();
        assert_eq!(
            url,
            "postgres://u@db:5432/x?sslmode=require&application_name=a"
        );
        assert_eq!(root, Some(PathBuf::from("/etc/ca.pem")));
        let (url, root) = take_tls_options("postgres://u@db/x").unwrap();
        assert_eq!((url.as_str(), root), ("postgres://u@db/x", None));
    }

    #[test]
    fn plain_unless_tls_is_required() {
        for url in ["postgres://u@db/x", "postgres://u@db/x?sslmode=prefer"] {
            let target = parse(url).unwrap();
            assert!(target.tls.is_none(), "{url}");
            assert_eq!(target.config.get_ssl_mode(), SslMode::Disable, "{url}");
        }
        let error = parse("postgres://u@db/x?sslrootcert=/nowhere.pem")
            .err()
            .unwrap();
        assert!(error.to_string().contains("sslmode=verify-full"), "{error}");
        let error = parse("postgres://u@db/x?sslmode=require&sslrootcert=/nowhere.pem")
            .err()
            .unwrap();
        assert!(error.to_string().contains("/nowhere.pem"), "{error}");
    }
}
