//! Opening inputs that may be gzipped. Common Crawl writes WARC and WET files as many gzip
//! members one after another (one per record), so decompression must go on past the end of
//! the first member: [`flate2::read::MultiGzDecoder`].

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

use super::ReadCounter;

use flate2::read::MultiGzDecoder;

/// Buffer size of every reader: large enough that system calls do not dominate.
pub(crate) const BUFFER: usize = 256 * 1024;

/// The two bytes every gzip member starts with.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Opens `path`, decompressing it when it starts with the gzip magic bytes (whatever its name);
/// the bytes read from the file are added to `counter`.
pub(crate) fn open(path: &Path, counter: &ReadCounter) -> io::Result<Box<dyn BufRead + Send>> {
    let file = Counted {
        inner: File::open(path)?,
        counter: counter.clone(),
    };
    wrap(Box::new(BufReader::with_capacity(BUFFER, file)))
}

/// A reader that adds what it reads to a [`ReadCounter`].
struct Counted<R> {
    inner: R,
    counter: ReadCounter,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.counter.add(n as u64);
        Ok(n)
    }
}

/// Wraps `reader` in a multi-member gzip decoder when its first bytes are the gzip magic.
pub(crate) fn wrap(mut reader: Box<dyn BufRead + Send>) -> io::Result<Box<dyn BufRead + Send>> {
    let head = loop {
        match reader.fill_buf() {
            Ok(head) => break head,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    };
    if head.starts_with(&GZIP_MAGIC) {
        Ok(Box::new(BufReader::with_capacity(
            BUFFER,
            MultiGzDecoder::new(reader),
        )))
    } else {
        Ok(reader)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::write::GzEncoder;
    use flate2::Compression;
    use std::io::{Read, Write};

    fn gz(data: &[u8]) -> Vec<u8> {
        let mut e = GzEncoder::new(Vec::new(), Compression::fast());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn reads_every_member() {
        let mut bytes = gz(b"first ");
        bytes.extend(gz(b"second"));
        let mut out = String::new();
        wrap(Box::new(io::Cursor::new(bytes)))
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        assert_eq!(out, "first second");
    }

    #[test]
    fn plain_passes_through() {
        let mut out = String::new();
        wrap(Box::new(io::Cursor::new(b"plain".to_vec())))
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        assert_eq!(out, "plain");
    }

    #[test]
    fn truncated_is_an_error() {
        let bytes = gz(&[b'x'; 10_000]);
        let cut = bytes[..bytes.len() / 2].to_vec();
        let mut out = Vec::new();
        assert!(wrap(Box::new(io::Cursor::new(cut)))
            .unwrap()
            .read_to_end(&mut out)
            .is_err());
    }
}
