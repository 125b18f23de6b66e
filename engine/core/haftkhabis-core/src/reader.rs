//! Finding log files and reading their lines: directories, gzip, standard input.
//!
//! Bad input never panics or aborts here: a file that cannot be opened or a stream that
//! breaks off (a truncated gzip member, an I/O error) yields a [`LineError`] in place of
//! lines, so the caller reports it and goes on (notation.md, "Fine points", Reading).
//!
//! [`LineReader`] reads through a large buffer and hands out each line as a slice of that
//! buffer (a line straddling two reads is copied into one reused buffer): no allocation
//! per line.

use std::fmt;
use std::fs::{self, File};
use std::io::{self, BufRead, BufReader, Cursor, Read};
use std::path::Path;

use flate2::read::MultiGzDecoder;

/// The file suffixes a directory contributes (optionally followed by `.gz`).
pub const LOG_SUFFIXES: [&str; 3] = [".jsonl", ".ndjson", ".log"];
/// The two bytes every gzip member starts with.
pub const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];
/// The path that names standard input.
pub const STDIN: &str = "-";

/// How much a reader buffers (the compressed and the decompressed side alike).
const BUFFER: usize = 1 << 20;
/// A line buffer grown past this by one huge line is shrunk back afterwards.
const LINE_KEEP: usize = 16 << 20;
const BOM: &[u8] = b"\xef\xbb\xbf";

/// A path given on the command line does not exist (the validator exits with 2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputPathError(pub String);

impl fmt::Display for InputPathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InputPathError {}

/// A file (or the rest of one) that could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineError {
    pub file: String,
    /// the line where reading failed; None when the file could not be opened
    pub line: Option<u64>,
    pub message: String,
}

/// A file name a directory contributes: `.jsonl`, `.ndjson` or `.log`, optionally `.gz`.
pub fn is_log_name(name: &str) -> bool {
    let base = name.strip_suffix(".gz").unwrap_or(name);
    LOG_SUFFIXES.iter().any(|suffix| base.ends_with(suffix))
}

/// Files to read, in input order: `-` and explicit files as given (whatever their name),
/// directories recursively (their log files in path order: sorted as strings, as Python
/// sorts `str(path)`). Symbolic links to files are read; links to directories are not
/// followed; unreadable subdirectories are skipped (as `Path.rglob` does). A name that is
/// not UTF-8 is kept lossily (it then fails to open and is reported as a line error).
pub fn expand_paths(paths: &[String]) -> Result<Vec<String>, InputPathError> {
    let mut files = Vec::new();
    for raw in paths {
        if raw == STDIN {
            files.push(STDIN.to_string());
            continue;
        }
        let path = Path::new(raw);
        if path.is_dir() {
            let mut found = Vec::new();
            walk(path, &mut found);
            found.sort_unstable();
            files.extend(found);
        } else if path.exists() {
            files.push(raw.clone());
        } else {
            return Err(InputPathError(format!("no such file or directory: {raw}")));
        }
    }
    Ok(files)
}

fn walk(dir: &Path, found: &mut Vec<String>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let path = entry.path();
        if kind.is_dir() {
            walk(&path, found);
            continue;
        }
        let name = entry.file_name();
        if !is_log_name(&name.to_string_lossy()) {
            continue;
        }
        let is_file = kind.is_file() || (kind.is_symlink() && path.is_file());
        if is_file {
            found.push(path.to_string_lossy().into_owned());
        }
    }
}

/// The file's name in messages: the path as the user gave it, `<stdin>` for `-`
/// (issue: "Paths in messages are shown as the user gave them").
pub fn display_name(file: &str) -> &str {
    if file == STDIN {
        "<stdin>"
    } else {
        file
    }
}

/// An I/O error as Python's `strerror` shows it: without Rust's " (os error N)".
fn io_message(error: &io::Error) -> String {
    let text = error.to_string();
    match text.find(" (os error ") {
        Some(at) if text.ends_with(')') => text[..at].to_string(),
        _ => text,
    }
}

/// Why a stream broke off; a truncated gzip stream in Python's words.
fn break_message(error: &io::Error) -> String {
    if error.kind() == io::ErrorKind::UnexpectedEof {
        "Compressed file ended before the end-of-stream marker was reached".to_string()
    } else {
        io_message(error)
    }
}

/// The lines of one file (or of standard input): `(line number, bytes)` for each
/// non-blank line, 1-based physical numbering, the line ending (`\n`, `\r\n`) removed,
/// a UTF-8 byte-order mark on line 1 dropped; a [`LineError`] where reading fails, after
/// which the reader is done.
///
/// Blank means empty or only spaces, tabs and carriage returns (JSON whitespace); a line
/// holding a form feed or a vertical tab is not blank (it is then a `malformed_json`
/// line). Gzip is recognised by its magic bytes, here and on standard input.
pub struct LineReader {
    file: String,
    source: Option<Box<dyn BufRead + Send>>,
    /// the open error, yielded once by the first `next_line`
    failed: Option<LineError>,
    /// a line straddling two reads
    buf: Vec<u8>,
    /// bytes of the source's buffer handed out last time, consumed on the next call
    consume: usize,
    /// the end or an error was met: the source is dropped on the next call
    ended: bool,
    number: u64,
}

impl LineReader {
    /// Open `file` (`-` is standard input). Never fails: an open error is yielded by
    /// the first [`LineReader::next_line`].
    pub fn open(file: &str) -> LineReader {
        let opened: io::Result<Box<dyn Read + Send>> = if file == STDIN {
            Ok(Box::new(io::stdin()))
        } else {
            File::open(file).map(|f| Box::new(f) as Box<dyn Read + Send>)
        };
        match opened {
            Ok(read) => LineReader::from_reader(file, read),
            Err(error) => LineReader {
                file: file.to_string(),
                source: None,
                failed: Some(LineError {
                    file: file.to_string(),
                    line: None,
                    message: format!("cannot open: {}", io_message(&error)),
                }),
                buf: Vec::new(),
                consume: 0,
                ended: false,
                number: 0,
            },
        }
    }

    /// Read lines from any byte stream (an upload, a test), named `file` in errors.
    pub fn from_reader<R: Read + Send + 'static>(file: &str, mut read: R) -> LineReader {
        let mut head = [0u8; 2];
        let mut got = 0;
        let mut failed = None;
        while got < head.len() {
            match read.read(&mut head[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => {
                    failed = Some(LineError {
                        file: file.to_string(),
                        line: Some(1),
                        message: format!(
                            "the file breaks off after line 0: {}",
                            io_message(&error)
                        ),
                    });
                    break;
                }
            }
        }
        let chained = Cursor::new(head).take(got as u64).chain(read);
        let source: Box<dyn BufRead + Send> = if got == 2 && head == GZIP_MAGIC {
            Box::new(BufReader::with_capacity(
                BUFFER,
                MultiGzDecoder::new(BufReader::with_capacity(BUFFER, chained)),
            ))
        } else {
            Box::new(BufReader::with_capacity(BUFFER, chained))
        };
        LineReader {
            file: file.to_string(),
            source: if failed.is_some() { None } else { Some(source) },
            failed,
            buf: Vec::new(),
            consume: 0,
            ended: false,
            number: 0,
        }
    }

    /// The file as given to [`LineReader::open`].
    pub fn file(&self) -> &str {
        &self.file
    }

    /// The next non-blank line, or the error that ends the file; None at the end.
    ///
    /// A line lying whole in the read buffer is handed out in place; only a line that
    /// straddles two reads is copied (into a buffer reused from line to line).
    pub fn next_line(&mut self) -> Option<Result<(u64, &[u8]), LineError>> {
        if let Some(error) = self.failed.take() {
            return Some(Err(error));
        }
        if self.ended {
            self.source = None; // closes the file
            return None;
        }
        let source = self.source.as_mut()?;
        if self.consume > 0 {
            source.consume(self.consume);
            self.consume = 0;
        }
        if self.buf.capacity() > LINE_KEEP {
            self.buf = Vec::new();
        }
        self.buf.clear();
        // where the line is: in the source's buffer (its length there) or in `buf`
        let (in_place, start, end) = loop {
            let chunk = match source.fill_buf() {
                Ok(chunk) => chunk,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(error) => {
                    self.ended = true;
                    let number = self.number;
                    return Some(Err(LineError {
                        file: self.file.clone(),
                        line: Some(number + 1),
                        message: format!(
                            "the file breaks off after line {number}: {}",
                            break_message(&error)
                        ),
                    }));
                }
            };
            let (in_place, length, taken) = if chunk.is_empty() {
                if self.buf.is_empty() {
                    self.ended = true;
                    return None;
                }
                (false, self.buf.len(), 0) // the last line has no ending
            } else if let Some(at) = memchr::memchr(b'\n', chunk) {
                if self.buf.is_empty() {
                    (true, at, at + 1)
                } else {
                    self.buf.extend_from_slice(&chunk[..at]);
                    (false, self.buf.len(), at + 1)
                }
            } else {
                let n = chunk.len();
                self.buf.extend_from_slice(chunk);
                source.consume(n);
                continue;
            };
            let line: &[u8] = if in_place {
                &chunk[..length]
            } else {
                &self.buf
            };
            self.number += 1;
            let mut start = 0;
            if self.number == 1 && line.starts_with(BOM) {
                start = BOM.len();
            }
            let mut end = line.len();
            while end > start && line[end - 1] == b'\r' {
                end -= 1;
            }
            let blank = line[start..end]
                .iter()
                .all(|&b| matches!(b, b' ' | b'\t' | b'\r'));
            if blank {
                source.consume(taken);
                self.buf.clear();
                continue;
            }
            if in_place {
                self.consume = taken;
            } else {
                source.consume(taken);
            }
            break (in_place, start, end);
        };
        if in_place {
            // the line is still in the source's buffer: fill_buf hands it back unread
            let chunk = source.fill_buf().ok()?;
            return Some(Ok((self.number, &chunk[start..end])));
        }
        Some(Ok((self.number, &self.buf[start..end])))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn collect(mut reader: LineReader) -> Vec<Result<(u64, Vec<u8>), LineError>> {
        let mut out = Vec::new();
        while let Some(item) = reader.next_line() {
            out.push(item.map(|(n, line)| (n, line.to_vec())));
        }
        out
    }

    fn lines_of(bytes: &'static [u8]) -> Vec<Result<(u64, Vec<u8>), LineError>> {
        collect(LineReader::from_reader("mem", bytes))
    }

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(bytes).ok();
        enc.finish().unwrap_or_default()
    }

    #[test]
    fn lines_endings_blanks_and_bom() {
        let got = lines_of(b"\xef\xbb\xbf{\"a\":1}\r\n\n  \t\r\n\x0c\n\x0b\r\n{\"b\":2}");
        let want: Vec<Result<(u64, Vec<u8>), LineError>> = vec![
            Ok((1, b"{\"a\":1}".to_vec())),
            Ok((4, b"\x0c".to_vec())),
            Ok((5, b"\x0b".to_vec())),
            Ok((6, b"{\"b\":2}".to_vec())),
        ];
        assert_eq!(got, want);
        assert!(lines_of(b"").is_empty());
        assert_eq!(lines_of(b"x"), vec![Ok((1, b"x".to_vec()))]);
    }

    #[test]
    fn gzip_by_magic_multi_member_and_truncation() {
        let mut data = gzip(b"one\ntwo\n");
        data.extend(gzip(b"three\n"));
        let got = collect(LineReader::from_reader("g", Cursor::new(data.clone())));
        assert_eq!(got.len(), 3);
        assert_eq!(got[2], Ok((3, b"three".to_vec())));

        let big: Vec<u8> = (0..20_000)
            .flat_map(|i| format!("{{\"n\":{i}}}\n").into_bytes())
            .collect();
        let mut cut = gzip(&big);
        cut.truncate(cut.len() / 2);
        let got = collect(LineReader::from_reader("g.gz", Cursor::new(cut)));
        let last = got.last().cloned();
        let Some(Err(error)) = last else {
            panic!("a truncated gzip must end in an error, got {last:?}");
        };
        let complete = got.len() as u64 - 1;
        assert_eq!(error.line, Some(complete + 1));
        assert!(error.message.starts_with(&format!(
            "the file breaks off after line {complete}: Compressed file ended"
        )));
        assert_eq!(error.file, "g.gz");
    }

    #[test]
    fn open_errors_and_names() {
        let got = collect(LineReader::open("/nonexistent/x.jsonl"));
        assert_eq!(
            got,
            vec![Err(LineError {
                file: "/nonexistent/x.jsonl".into(),
                line: None,
                message: "cannot open: No such file or directory".into(),
            })]
        );
        assert_eq!(display_name("-"), "<stdin>");
        assert_eq!(display_name("./logs/a.jsonl"), "./logs/a.jsonl");
        assert!(is_log_name("a.jsonl.gz") && is_log_name("b.log") && !is_log_name("c.txt"));
        assert!(!is_log_name("d.gz"));
    }

    #[test]
    fn expand_directories_in_path_order() {
        let root = std::env::temp_dir().join(format!("hk-reader-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        for dir in ["a/b", "a-b"] {
            fs::create_dir_all(root.join(dir)).ok();
        }
        for file in [
            "a/b/x.jsonl",
            "a-b/y.log.gz",
            "a/z.ndjson",
            "a/skip.txt",
            ".h.log",
        ] {
            fs::write(root.join(file), b"").ok();
        }
        let given = root.to_string_lossy().into_owned();
        let explicit = root.join("a/skip.txt").to_string_lossy().into_owned();
        let got = expand_paths(&[given.clone(), "-".into(), explicit.clone()]);
        let want = vec![
            format!("{given}/.h.log"),
            format!("{given}/a-b/y.log.gz"),
            format!("{given}/a/b/x.jsonl"),
            format!("{given}/a/z.ndjson"),
            "-".to_string(),
            explicit,
        ];
        assert_eq!(got, Ok(want));
        let missing = format!("{given}/nope");
        assert_eq!(
            expand_paths(std::slice::from_ref(&missing)),
            Err(InputPathError(format!(
                "no such file or directory: {missing}"
            )))
        );
        let _ = fs::remove_dir_all(&root);
    }
}
