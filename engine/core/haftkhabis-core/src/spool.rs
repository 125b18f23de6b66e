//! Routing a batch's lines by game before the workers read them.
//!
//! An ingest on several processes (or a cluster) gives each worker a shard of the games.
//! [`route_files`] reads the input once, parses each line with the one parser, decides its
//! game exactly as the validator does ([`game_of_line`](crate::game::game_of_line)) and
//! appends it to its shard's *spool*: a file of records `file index (u32 LE) · line
//! number (u64 LE) · length (u32 LE) · the line's bytes`. A worker then reads only its spool
//! ([`SpoolReader`]), so no game is split and no worker reads another's lines. Lines that
//! belong to no game come back as [`ErrorRecord`]s (with their bytes, for the quarantine);
//! a file that cannot be read, or breaks off, is reported with the lines it gave.
//!
//! The shard of a game is a stable hash of its id ([`shard_of`]): the same on every
//! machine and in every run, so a cluster's workers agree without talking.

use std::fs::{File, OpenOptions};
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::Path;
use std::sync::Arc;

use crate::game::Line;
use crate::reader::{display_name, LineError, LineReader};
use crate::validator::ErrorRecord;
use crate::violation::Code;

const SPOOL_BUFFER: usize = 1 << 20;
/// The longest line a spool holds (a record's length is a u32).
const MAX_RECORD: usize = u32::MAX as usize;

/// The shard (0..`shards`) of a game: FNV-1a (64-bit) of its id, modulo `shards`.
pub fn shard_of(game: &str, shards: u32) -> u32 {
    if shards <= 1 {
        return 0;
    }
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &byte in game.as_bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    (hash % u64::from(shards)) as u32
}

/// What reading one input file gave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileRead {
    pub file: String,
    /// non-blank lines read (malformed ones included)
    pub lines: u64,
    /// the error that ended the file: unreadable (`line` None) or broken off
    pub error: Option<LineError>,
}

/// Read `files` once and append each game line to the spool of its game's shard
/// (`spools[shard_of(game, spools.len())]`, created or appended to). After each file,
/// `on_file` gets what reading it gave and its lines that belong to no game (with their
/// bytes); it returns false to stop. Returns the lines written to each spool; fails only
/// when a spool cannot be written.
pub fn route_files<F>(files: &[String], spools: &[&Path], mut on_file: F) -> io::Result<Vec<u64>>
where
    F: FnMut(FileRead, Vec<ErrorRecord>) -> bool,
{
    let shards = u32::try_from(spools.len())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "too many spools"))?;
    if shards == 0 || files.len() > u32::MAX as usize {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "no spool to route to",
        ));
    }
    let mut outs = spools
        .iter()
        .map(|path| {
            OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map(|f| BufWriter::with_capacity(SPOOL_BUFFER, f))
        })
        .collect::<io::Result<Vec<_>>>()?;
    let mut spooled = vec![0u64; spools.len()];
    for (index, file) in files.iter().enumerate() {
        let name: Arc<str> = Arc::from(display_name(file));
        let mut reader = LineReader::open(file);
        let mut read = FileRead {
            file: file.clone(),
            lines: 0,
            error: None,
        };
        let mut errors = Vec::new();
        while let Some(item) = reader.next_line() {
            let (number, raw) = match item {
                Ok(line) => line,
                Err(error) => {
                    read.error = Some(error);
                    continue;
                }
            };
            read.lines += 1;
            let refused = |code: Code, message: String| ErrorRecord {
                file: name.clone(),
                line: Some(number),
                code,
                message,
                raw: Some(raw.into()),
            };
            // read as the validator reads it (a clean line straight to its event), so the
            // router and the validator never disagree on a line's game
            let line = match Line::read(raw, true) {
                Ok((line, _)) => line,
                Err(error) => {
                    errors.push(refused(Code::MalformedJson, format!("the line is {error}")));
                    continue;
                }
            };
            let shard = match line.game() {
                Ok(game) => shard_of(game, shards) as usize,
                Err((code, message)) => {
                    errors.push(refused(code, message));
                    continue;
                }
            };
            if raw.len() > MAX_RECORD {
                let message = "the line is longer than 4 GiB".to_string();
                errors.push(refused(Code::MalformedJson, message));
                continue;
            }
            let out = &mut outs[shard];
            out.write_all(&(index as u32).to_le_bytes())?;
            out.write_all(&number.to_le_bytes())?;
            out.write_all(&(raw.len() as u32).to_le_bytes())?;
            out.write_all(raw)?;
            spooled[shard] += 1;
        }
        if !on_file(read, errors) {
            break;
        }
    }
    for mut out in outs {
        out.flush()?;
    }
    Ok(spooled)
}

/// Reads a spool's records back: (file index, line number, the line's bytes).
pub struct SpoolReader {
    source: BufReader<File>,
    line: Vec<u8>,
}

impl SpoolReader {
    pub fn open(path: &Path) -> io::Result<SpoolReader> {
        Ok(SpoolReader {
            source: BufReader::with_capacity(SPOOL_BUFFER, File::open(path)?),
            line: Vec::new(),
        })
    }

    /// The next record; None at the end. A spool cut short is an error.
    pub fn next_record(&mut self) -> io::Result<Option<(u32, u64, &[u8])>> {
        let mut head = [0u8; 16];
        let mut got = 0;
        while got < head.len() {
            match self.source.read(&mut head[got..]) {
                Ok(0) if got == 0 => return Ok(None),
                Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Ok(n) => got += n,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => return Err(error),
            }
        }
        let word = |at: usize, n: usize| -> u64 {
            head[at..at + n]
                .iter()
                .rev()
                .fold(0u64, |acc, &b| (acc << 8) | u64::from(b))
        };
        let (file, line, length) = (word(0, 4) as u32, word(4, 8), word(12, 4) as usize);
        self.line.resize(length, 0);
        self.source.read_exact(&mut self.line)?;
        Ok(Some((file, line, &self.line)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_are_stable_and_spread() {
        assert_eq!(shard_of("anything", 1), 0);
        // FNV-1a of "a" is 0xaf63dc4c8601ec8c
        assert_eq!(shard_of("a", 7), (0xaf63_dc4c_8601_ec8c_u64 % 7) as u32);
        let mut counts = [0u32; 4];
        for i in 0..4000 {
            counts[shard_of(&format!("g-{i}"), 4) as usize] += 1;
        }
        assert!(counts.iter().all(|&n| n > 800), "{counts:?}");
    }

    #[test]
    fn routes_by_parsed_game_and_reads_back() {
        let dir = std::env::temp_dir().join(format!("hk-spool-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let input = dir.join("in.jsonl");
        std::fs::write(
            &input,
            "{\"game\":\"a\",\"seq\":0}\n\nnot json\n{\"game\":\"b\",\"game\" :\"c\",\"seq\":0}\n[1]\n{\"seq\":1}\n",
        )
        .expect("write");
        let spools = [dir.join("0.spool"), dir.join("1.spool")];
        let paths: Vec<&Path> = spools.iter().map(|p| p.as_path()).collect();
        let files = vec![input.to_string_lossy().to_string()];
        let mut reads = Vec::new();
        let mut errors = Vec::new();
        let spooled = route_files(&files, &paths, |read, found| {
            reads.push(read);
            errors.extend(found);
            true
        })
        .expect("route");
        assert_eq!(spooled.iter().sum::<u64>(), 2);
        assert_eq!(reads[0].lines, 5);
        let codes: Vec<(Option<u64>, Code)> = errors.iter().map(|e| (e.line, e.code)).collect();
        assert_eq!(
            codes,
            vec![
                (Some(3), Code::MalformedJson),
                (Some(5), Code::MalformedJson),
                (Some(6), Code::Schema)
            ]
        );
        assert_eq!(errors[0].raw.as_deref(), Some(&b"not json"[..]));
        let mut seen = Vec::new();
        for (shard, path) in spools.iter().enumerate() {
            let mut reader = SpoolReader::open(path).expect("open");
            while let Some((file, line, raw)) = reader.next_record().expect("read") {
                seen.push((shard, file, line, String::from_utf8_lossy(raw).to_string()));
            }
        }
        seen.sort_by_key(|s| s.2);
        assert_eq!(seen.len(), 2);
        // the last `game` written counts, as in the validator
        assert_eq!(seen[0].0 as u32, shard_of("a", 2));
        assert_eq!(seen[1].0 as u32, shard_of("c", 2));
        assert_eq!((seen[1].1, seen[1].2), (0, 4));
        std::fs::remove_dir_all(&dir).ok();
    }
}
