//! Finding log files and reading their lines: directories, gzip, standard input.
//!
//! Bad input never panics or aborts here: a file that cannot be opened or a stream that
//! breaks off (a truncated gzip member, an I/O error) yields a [`LineError`] in place of
//! lines, so the caller reports it and goes on (notation.md, "Fine points", Reading).
//!
//! [`LineReader`] reads into one large buffer of its own and hands out each line as a
//! slice of it (a line straddling two reads is moved to the buffer's start before the
//! next read): no allocation and no copy per line.

use std::fmt;
use std::fs::{self, File};
use std::io::{self, BufReader, Cursor, Read, Seek, SeekFrom};
use std::path::Path;

use flate2::read::MultiGzDecoder;

use crate::violation::Code;

/// The file suffixes a directory contributes (optionally followed by `.gz`).
pub const LOG_SUFFIXES: [&str; 3] = [".jsonl", ".ndjson", ".log"];
/// The two bytes every gzip member starts with.
pub const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];
/// The path that names standard input.
pub const STDIN: &str = "-";

/// How much a reader buffers (the compressed and the decompressed side alike).
const BUFFER: usize = 1 << 20;
/// A reader's first buffer: a pushed game's file (some 20 KiB) fits it whole. A larger
/// source doubles it, read by read, up to [`BUFFER`]. (Live ingest opens a reader a game:
/// a first buffer of [`BUFFER`], zeroed and faulted in for each, was 3–4 % of a group
/// commit's samples in a profile.)
const FIRST_BUFFER: usize = 64 << 10;
/// The longest line read by default, in bytes (its ending not counted): 1 MiB, some 200
/// times the longest line a real game writes (a `deal` of 104 cards). A longer line is a
/// `line_too_long` line error, read past without being held (issue #34: "Line length
/// capped on every path … an over-long line is a located line error, read past without
/// buffering it whole"). Exported to Python (`engine._core.DEFAULT_MAX_LINE_BYTES`).
pub const DEFAULT_MAX_LINE_BYTES: usize = 1 << 20;
/// A buffer grown past this by one huge line is shrunk back afterwards.
const LINE_KEEP: usize = 16 << 20;
const BOM: &[u8] = b"\xef\xbb\xbf";

/// A path given on the command line does not exist (the validator exits with 2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputPathError {
    /// the path as given
    pub path: String,
}

impl fmt::Display for InputPathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "no such file or directory: {}", self.path)
    }
}

impl std::error::Error for InputPathError {}

/// A file (or the rest of one) that could not be read, or one line that was not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineError {
    pub file: String,
    /// the line where reading failed; None when the file could not be opened
    pub line: Option<u64>,
    /// `malformed_json` when the file ends here (unreadable, broken off);
    /// `line_too_long` for one line past the cap, after which reading goes on
    pub code: Code,
    pub message: String,
}

/// What a `line_too_long` error says, the cap being `max_line` bytes.
pub fn too_long_message(max_line: usize) -> String {
    format!("the line is longer than the cap of {max_line} bytes (max_line_bytes); it was skipped unread")
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
            return Err(InputPathError { path: raw.clone() });
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

/// Exactly `left` bytes of `inner` (a `Take` of them): ending before them is an error.
struct Exact<R> {
    inner: io::Take<R>,
    left: u64,
}

impl<R: Read> Read for Exact<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n == 0 && self.left > 0 && !buf.is_empty() {
            // not `UnexpectedEof`, which `break_message` words as a gzip stream's end
            return Err(io::Error::other(format!(
                "its source ends {} bytes early",
                self.left
            )));
        }
        self.left -= n as u64;
        Ok(n)
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
///
/// A line longer than the cap ([`LineReader::max_line_bytes`], default
/// [`DEFAULT_MAX_LINE_BYTES`]) is a `line_too_long` [`LineError`] at its number, and the
/// reader goes on after it: the buffer never holds more than about twice the cap, however
/// long the line (a one-line gzip bomb of 4 GiB is read in constant memory).
pub struct LineReader {
    file: String,
    /// the bytes (decompressed, for gzip); None once done
    source: Option<Box<dyn Read + Send>>,
    /// the open error, yielded once by the first `next_line`
    failed: Option<LineError>,
    /// what was read: `buf[start..filled]` is not handed out yet
    buf: Vec<u8>,
    start: usize,
    filled: usize,
    /// `buf[start..scanned]` holds no line ending (the search goes on from there)
    scanned: usize,
    /// the source has no more bytes
    at_end: bool,
    /// an error was met: the source is dropped on the next call
    ended: bool,
    number: u64,
    /// the longest line handed out, in bytes
    max_line: usize,
    /// the last read filled the buffer to its end (the source is larger than the buffer)
    read_full: bool,
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
            Err(error) => LineReader::unopened(file, &error),
        }
    }

    /// Read the `size` bytes at `offset` of the file `source` as the file named `file`
    /// (a body held in a larger file: the live service's journal). Never fails: an open
    /// or seek error is yielded by the first [`LineReader::next_line`], and a source that
    /// ends before `size` bytes breaks the file off there, as a truncated file does.
    pub fn open_range(file: &str, source: &str, offset: u64, size: u64) -> LineReader {
        let opened = File::open(source).and_then(|mut f| {
            f.seek(SeekFrom::Start(offset))?;
            Ok(f)
        });
        match opened {
            Ok(f) => LineReader::from_reader(
                file,
                Exact {
                    inner: f.take(size),
                    left: size,
                },
            ),
            Err(error) => LineReader::unopened(file, &error),
        }
    }

    /// A reader whose source could not be opened: the error is its only item.
    fn unopened(file: &str, error: &io::Error) -> LineReader {
        let failed = LineError {
            file: file.to_string(),
            line: None,
            code: Code::MalformedJson,
            message: format!("cannot open: {}", io_message(error)),
        };
        LineReader::new(file, None, Some(failed))
    }

    /// A reader at the start of `source`, or yielding `failed` first.
    fn new(
        file: &str,
        source: Option<Box<dyn Read + Send>>,
        failed: Option<LineError>,
    ) -> LineReader {
        LineReader {
            file: file.to_string(),
            source,
            failed,
            buf: Vec::new(),
            start: 0,
            filled: 0,
            scanned: 0,
            at_end: false,
            ended: false,
            number: 0,
            max_line: DEFAULT_MAX_LINE_BYTES,
            read_full: false,
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
                        code: Code::MalformedJson,
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
        let source: Box<dyn Read + Send> = if got == 2 && head == GZIP_MAGIC {
            Box::new(MultiGzDecoder::new(BufReader::with_capacity(
                BUFFER, chained,
            )))
        } else {
            Box::new(chained)
        };
        let source = if failed.is_some() { None } else { Some(source) };
        LineReader::new(file, source, failed)
    }

    /// The same reader with another cap on a line's length (at least 1 byte).
    pub fn max_line_bytes(mut self, max_line: usize) -> LineReader {
        self.max_line = max_line.max(1);
        self
    }

    /// The file as given to [`LineReader::open`].
    pub fn file(&self) -> &str {
        &self.file
    }

    /// The next non-blank line, or the error that ends the file; None at the end.
    ///
    /// Lines are handed out in place from the buffer; only a line that straddles two
    /// reads is moved, to the buffer's start, before the next read.
    pub fn next_line(&mut self) -> Option<Result<(u64, &[u8]), LineError>> {
        if let Some(error) = self.failed.take() {
            return Some(Err(error));
        }
        if self.ended {
            self.source = None; // closes the file
            return None;
        }
        // where the line is in `buf`
        let (start, end) = loop {
            let pending = self.buf.get(self.scanned..self.filled).unwrap_or_default();
            let line_end = match memchr::memchr(b'\n', pending) {
                Some(at) => Some((self.scanned + at, self.scanned + at + 1)),
                None if self.at_end && self.start < self.filled => {
                    Some((self.filled, self.filled)) // the last line has no ending
                }
                None => None,
            };
            let Some((line_end, next)) = line_end else {
                if self.at_end {
                    self.source = None; // closes the file
                    return None;
                }
                if self.filled - self.start > self.max_line {
                    // past the cap with no ending in sight: skip to the ending unheld
                    self.number += 1;
                    let number = self.number;
                    self.skip_rest_of_line();
                    return Some(Err(self.too_long(number)));
                }
                self.scanned = self.filled;
                if let Err(error) = self.read_more() {
                    self.ended = true;
                    let number = self.number;
                    return Some(Err(LineError {
                        file: self.file.clone(),
                        line: Some(number + 1),
                        code: Code::MalformedJson,
                        message: format!(
                            "the file breaks off after line {number}: {}",
                            break_message(&error)
                        ),
                    }));
                }
                continue;
            };
            let long = line_end - self.start > self.max_line;
            let line = self.buf.get(self.start..line_end).unwrap_or_default();
            let from = self.start;
            self.start = next;
            self.scanned = next;
            self.number += 1;
            if long {
                return Some(Err(self.too_long(self.number)));
            }
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
            if !blank {
                break (from + start, from + end);
            }
        };
        let line = self.buf.get(start..end).unwrap_or_default();
        Some(Ok((self.number, line)))
    }

    /// Line `number` is longer than the cap.
    fn too_long(&self, number: u64) -> LineError {
        LineError {
            file: self.file.clone(),
            line: Some(number),
            code: Code::LineTooLong,
            message: too_long_message(self.max_line),
        }
    }

    /// Drop the line begun at `start` (no ending in the buffer) and read on past its
    /// ending, a buffer at a time, holding none of it. A read error then ends the file
    /// (yielded by the next call).
    fn skip_rest_of_line(&mut self) {
        loop {
            self.start = 0;
            self.filled = 0;
            self.scanned = 0;
            if self.at_end {
                return;
            }
            if let Err(error) = self.read_more() {
                let number = self.number;
                self.ended = true;
                self.failed = Some(LineError {
                    file: self.file.clone(),
                    line: Some(number + 1),
                    code: Code::MalformedJson,
                    message: format!(
                        "the file breaks off after line {number}: {}",
                        break_message(&error)
                    ),
                });
                return;
            }
            let read = self.buf.get(..self.filled).unwrap_or_default();
            if let Some(at) = memchr::memchr(b'\n', read) {
                self.start = at + 1;
                self.scanned = at + 1;
                return;
            }
        }
    }

    /// Read more of the source after the bytes not handed out yet (moved to the
    /// buffer's start first); at the source's end, `at_end` is set.
    fn read_more(&mut self) -> io::Result<()> {
        let Some(source) = self.source.as_mut() else {
            self.at_end = true;
            return Ok(());
        };
        let kept = self.filled - self.start;
        if self.start > 0 {
            self.buf.copy_within(self.start..self.filled, 0);
            self.scanned -= self.start;
            self.filled = kept;
            self.start = 0;
        }
        if self.buf.len() > LINE_KEEP && kept < BUFFER {
            // a huge line is gone: give its room back
            self.buf.truncate(BUFFER);
            self.buf.shrink_to_fit();
        }
        if self.buf.is_empty() {
            self.buf.resize(FIRST_BUFFER, 0);
        } else if self.filled == self.buf.len() {
            // a line longer than the buffer: make room for more of it
            self.buf.resize(self.buf.len() * 2, 0);
        } else if self.read_full && self.buf.len() < BUFFER {
            // a source larger than the buffer: fewer, larger reads
            self.buf.resize((self.buf.len() * 2).min(BUFFER), 0);
        }
        loop {
            let room = self.buf.get_mut(self.filled..).unwrap_or_default();
            let wanted = room.len();
            match source.read(room) {
                Ok(0) => {
                    self.at_end = true;
                    return Ok(());
                }
                Ok(n) => {
                    self.filled += n;
                    self.read_full = n == wanted;
                    return Ok(());
                }
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => return Err(error),
            }
        }
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

    /// Hands out its bytes a few at a time, as a pipe may.
    struct Trickle(Vec<u8>, usize);

    impl Read for Trickle {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let n = out.len().min(3).min(self.0.len() - self.1);
            out[..n].copy_from_slice(&self.0[self.1..self.1 + n]);
            self.1 += n;
            Ok(n)
        }
    }

    #[test]
    fn lines_straddling_reads_and_longer_than_the_buffer() {
        let text = b"\xef\xbb\xbf{\"a\":1}\r\n\n \r\n{\"bb\":22}\nlast".to_vec();
        let got = collect(LineReader::from_reader("t", Trickle(text, 0)));
        let want: Vec<Result<(u64, Vec<u8>), LineError>> = vec![
            Ok((1, b"{\"a\":1}".to_vec())),
            Ok((4, b"{\"bb\":22}".to_vec())),
            Ok((5, b"last".to_vec())),
        ];
        assert_eq!(got, want);
        let long = vec![b'x'; 3 * BUFFER + 17];
        let mut data = b"first\n".to_vec();
        data.extend_from_slice(&long);
        data.extend_from_slice(b"\nafter\n");
        let reader = LineReader::from_reader("t", Cursor::new(data)).max_line_bytes(4 * BUFFER);
        let got = collect(reader);
        assert_eq!(got.len(), 3);
        assert_eq!(got[1], Ok((2, long)));
        assert_eq!(got[2], Ok((3, b"after".to_vec())));
    }

    /// issue #34: "an over-long line is a located line error, read past without
    /// buffering it whole".
    #[test]
    fn a_line_past_the_cap_is_an_error_and_reading_goes_on() {
        let mut data = b"first\n".to_vec();
        data.extend(vec![b' '; 5 * BUFFER + 3]);
        data.extend_from_slice(b"\nafter\n");
        data.extend(vec![b'y'; 40]);
        data.extend_from_slice(b"\n");
        data.extend(vec![b'z'; 3 * BUFFER]); // the last line, without an ending
        let mut reader = LineReader::from_reader("t", Cursor::new(data)).max_line_bytes(32);
        let mut got = Vec::new();
        let mut most = 0;
        while let Some(item) = reader.next_line() {
            got.push(item.map(|(n, line)| (n, line.to_vec())));
            most = most.max(reader.buf.len());
        }
        let codes: Vec<Result<u64, (Option<u64>, Code)>> = got
            .iter()
            .map(|item| match item {
                Ok((n, _)) => Ok(*n),
                Err(e) => Err((e.line, e.code)),
            })
            .collect();
        assert_eq!(
            codes,
            [
                Ok(1),
                Err((Some(2), Code::LineTooLong)),
                Ok(3),
                Err((Some(4), Code::LineTooLong)),
                Err((Some(5), Code::LineTooLong)),
            ]
        );
        assert_eq!(got[2], Ok((3, b"after".to_vec())));
        let Err(error) = &got[1] else {
            panic!("line 2 must be an error");
        };
        assert_eq!(
            error.message,
            "the line is longer than the cap of 32 bytes (max_line_bytes); it was skipped unread"
        );
        assert!(most <= 2 * BUFFER, "the buffer grew to {most} bytes");
    }

    /// Each line's bytes and the buffer's largest size while reading.
    fn lines_and_room(mut reader: LineReader) -> (Vec<Vec<u8>>, usize) {
        let (mut lines, mut most) = (Vec::new(), 0);
        while let Some(item) = reader.next_line() {
            let (_, line) = item.expect("a line");
            lines.push(line.to_vec());
            most = most.max(reader.buf.len());
        }
        (lines, most)
    }

    #[test]
    fn a_small_source_keeps_a_small_buffer_and_a_large_one_grows_it() {
        let small: Vec<u8> = (0..300)
            .flat_map(|i| format!("{{\"n\":{i}}}\n").into_bytes())
            .collect();
        let (lines, most) = lines_and_room(LineReader::from_reader("s", Cursor::new(small)));
        assert_eq!(lines.len(), 300);
        assert_eq!(most, FIRST_BUFFER);

        // lines of many lengths, so they straddle reads of every buffer size on the way
        let expected: Vec<Vec<u8>> = (0..40_000)
            .map(|i: usize| {
                format!("{{\"n\":{i},\"pad\":\"{}\"}}", "x".repeat(i % 97)).into_bytes()
            })
            .collect();
        let large: Vec<u8> = expected
            .iter()
            .flat_map(|line| line.iter().copied().chain([b'\n']))
            .collect();
        assert!(large.len() > 2 * BUFFER);
        let (lines, most) = lines_and_room(LineReader::from_reader("l", Cursor::new(large)));
        assert_eq!(lines, expected);
        assert_eq!(most, BUFFER);
    }

    #[test]
    fn a_range_of_a_file_reads_as_a_file_of_its_own() {
        let dir = std::env::temp_dir().join(format!("hk-range-{}", std::process::id()));
        fs::create_dir_all(&dir).expect("a temporary folder");
        let journal = dir.join("segment");
        let body = b"{\"a\":1}\n\n{\"b\":2}\n";
        let mut bytes = b"header one\n".to_vec();
        let offset = bytes.len() as u64;
        bytes.extend_from_slice(body);
        bytes.extend_from_slice(b"\nheader two\n");
        fs::write(&journal, &bytes).expect("the segment written");
        let source = journal.to_str().expect("a UTF-8 path");

        let got = collect(LineReader::open_range(
            "body",
            source,
            offset,
            body.len() as u64,
        ));
        assert_eq!(
            got,
            [
                Ok((1, b"{\"a\":1}".to_vec())),
                Ok((3, b"{\"b\":2}".to_vec()))
            ]
        );

        // a source that ends inside the range breaks the file off after its last line
        // (the body, then the second header: lines 4 and 5)
        let short = collect(LineReader::open_range("body", source, offset, 1_000));
        let Some(Err(error)) = short.last() else {
            panic!("a range past the source's end must end with an error: {short:?}");
        };
        assert_eq!((error.file.as_str(), error.line), ("body", Some(6)));
        assert!(error.message.contains("ends"), "{}", error.message);

        let missing = collect(LineReader::open_range("body", "/no/such/segment", 0, 4));
        assert_eq!(missing.len(), 1);
        assert!(matches!(&missing[0], Err(e) if e.line.is_none() && e.file == "body"));
        fs::remove_dir_all(&dir).expect("the temporary folder removed");
    }

    #[test]
    fn a_gzip_bomb_of_one_line_is_read_past_in_bounded_memory() {
        let mut data = vec![b' '; 64 * BUFFER];
        data.extend_from_slice(b"\n{}\n");
        let bomb = gzip(&data);
        let mut reader = LineReader::from_reader("b.gz", Cursor::new(bomb));
        let mut got = Vec::new();
        let mut most = 0;
        while let Some(item) = reader.next_line() {
            got.push(item.map(|(n, line)| (n, line.to_vec())).map_err(|e| e.code));
            most = most.max(reader.buf.len());
        }
        assert_eq!(got, [Err(Code::LineTooLong), Ok((2, b"{}".to_vec()))]);
        assert!(most <= 2 * BUFFER, "the buffer grew to {most} bytes");
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
                code: Code::MalformedJson,
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
        let error = expand_paths(std::slice::from_ref(&missing));
        assert_eq!(
            error,
            Err(InputPathError {
                path: missing.clone()
            })
        );
        assert_eq!(
            error.map_err(|e| e.to_string()),
            Err(format!("no such file or directory: {missing}"))
        );
        let _ = fs::remove_dir_all(&root);
    }
}
