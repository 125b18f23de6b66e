//! Arrow columns built in Rust, handed to pyarrow as buffers.
//!
//! Each builder lays its values out as the Arrow columnar format does (a validity bitmap,
//! 32-bit offsets, values), so pyarrow's `Array.from_buffers` takes them as they are: one
//! copy into a Python `bytes` per buffer, no per-value Python object. A column goes to
//! Python as `(length, null_count, [buffers], [children])` (`engine/_core.pyi`:
//! `ColumnData`); `ingest/columns.py` turns it into a pyarrow array of the type
//! `ingest/schema.py` declares for it.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};

/// A validity bitmap (bit set = value present), least significant bit first.
#[derive(Default)]
pub struct Validity {
    bits: Vec<u8>,
    len: usize,
    nulls: usize,
}

impl Validity {
    fn push(&mut self, present: bool) {
        if self.len % 8 == 0 {
            self.bits.push(0);
        }
        if present {
            if let Some(last) = self.bits.last_mut() {
                *last |= 1 << (self.len % 8);
            }
        } else {
            self.nulls += 1;
        }
        self.len += 1;
    }

    /// The bitmap, or None when every value is present (Arrow's shorthand).
    fn export<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyBytes>> {
        (self.nulls > 0).then(|| PyBytes::new(py, &self.bits))
    }
}

/// Fixed-width values as little-endian bytes (Arrow's layout).
fn bytes_of<'py, T: Primitive>(py: Python<'py>, values: &[T]) -> Bound<'py, PyBytes> {
    let mut out = Vec::with_capacity(values.len() * T::WIDTH);
    for &v in values {
        v.put_le(&mut out);
    }
    PyBytes::new(py, &out)
}

fn payload<'py>(
    py: Python<'py>,
    length: usize,
    nulls: usize,
    buffers: Vec<Option<Bound<'py, PyBytes>>>,
    children: Vec<Bound<'py, PyTuple>>,
) -> PyResult<Bound<'py, PyTuple>> {
    let buffers = PyList::new(py, buffers)?;
    let children = PyList::new(py, children)?;
    (length, nulls, buffers, children).into_pyobject(py)
}

/// Anything that becomes one Arrow column.
pub trait Column {
    fn export<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>>;
}

/// A fixed-width Arrow value: its little-endian bytes.
pub trait Primitive: Copy + Default {
    const WIDTH: usize;
    fn put_le(self, out: &mut Vec<u8>);
}

impl Primitive for i64 {
    const WIDTH: usize = 8;
    fn put_le(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
}

impl Primitive for i32 {
    const WIDTH: usize = 4;
    fn put_le(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
}

/// Fixed-width integers: `int64` (and `timestamp[us]`), `int32`.
#[derive(Default)]
pub struct IntCol<T: Primitive> {
    values: Vec<T>,
    validity: Validity,
}

/// 64-bit integers (`int64`, and `timestamp[us]`).
pub type I64Col = IntCol<i64>;
/// 32-bit integers (`int32`).
pub type I32Col = IntCol<i32>;

impl IntCol<i64> {
    pub fn push(&mut self, value: Option<i64>) {
        self.values.push(value.unwrap_or(0));
        self.validity.push(value.is_some());
    }
}

impl IntCol<i32> {
    /// A value beyond i32 is clamped (the notation's range checks keep counts and numbers
    /// far below it).
    pub fn push(&mut self, value: Option<i64>) {
        let clamped =
            value.map(|v| i32::try_from(v).unwrap_or(if v < 0 { i32::MIN } else { i32::MAX }));
        self.values.push(clamped.unwrap_or(0));
        self.validity.push(value.is_some());
    }
}

impl<T: Primitive> Column for IntCol<T> {
    fn export<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let values = bytes_of(py, &self.values);
        payload(
            py,
            self.values.len(),
            self.validity.nulls,
            vec![self.validity.export(py), Some(values)],
            vec![],
        )
    }
}

/// Booleans (bit-packed).
#[derive(Default)]
pub struct BoolCol {
    values: Validity,
    validity: Validity,
}

impl BoolCol {
    pub fn push(&mut self, value: Option<bool>) {
        self.values.push(value.unwrap_or(false));
        self.validity.push(value.is_some());
    }
}

impl Column for BoolCol {
    fn export<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let values = PyBytes::new(py, &self.values.bits);
        payload(
            py,
            self.values.len,
            self.validity.nulls,
            vec![self.validity.export(py), Some(values)],
            vec![],
        )
    }
}

/// UTF-8 strings (`string`: 32-bit offsets).
pub struct StrCol {
    offsets: Vec<i32>,
    data: Vec<u8>,
    validity: Validity,
}

impl Default for StrCol {
    fn default() -> Self {
        StrCol {
            offsets: vec![0],
            data: Vec::new(),
            validity: Validity::default(),
        }
    }
}

impl StrCol {
    /// Append a value; its bytes must be UTF-8 (every caller hands out text the parser
    /// or the engine produced).
    pub fn push_bytes(&mut self, value: Option<&[u8]>) {
        if let Some(bytes) = value {
            self.data.extend_from_slice(bytes);
        }
        self.offsets
            .push(i32::try_from(self.data.len()).unwrap_or(i32::MAX));
        self.validity.push(value.is_some());
    }

    pub fn push(&mut self, value: Option<&str>) {
        self.push_bytes(value.map(str::as_bytes));
    }

    fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Bytes held (a batch is handed over before its offsets could overflow).
    pub fn data_len(&self) -> usize {
        self.data.len()
    }
}

impl Column for StrCol {
    fn export<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let offsets = bytes_of(py, &self.offsets);
        let data = PyBytes::new(py, &self.data);
        payload(
            py,
            self.len(),
            self.validity.nulls,
            vec![self.validity.export(py), Some(offsets), Some(data)],
            vec![],
        )
    }
}

/// Lists of strings (`list<string>`).
pub struct StrListCol {
    offsets: Vec<i32>,
    items: StrCol,
    validity: Validity,
}

impl Default for StrListCol {
    fn default() -> Self {
        StrListCol {
            offsets: vec![0],
            items: StrCol::default(),
            validity: Validity::default(),
        }
    }
}

impl StrListCol {
    pub fn push<S: AsRef<str>>(&mut self, value: Option<&[S]>) {
        if let Some(items) = value {
            for item in items {
                self.items.push(Some(item.as_ref()));
            }
        }
        self.offsets
            .push(i32::try_from(self.items.len()).unwrap_or(i32::MAX));
        self.validity.push(value.is_some());
    }
}

impl Column for StrListCol {
    fn export<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let offsets = bytes_of(py, &self.offsets);
        payload(
            py,
            self.offsets.len() - 1,
            self.validity.nulls,
            vec![self.validity.export(py), Some(offsets)],
            vec![self.items.export(py)?],
        )
    }
}

/// Maps of string to 64-bit integer (`map<string, int64>`: a list of key/value structs).
pub struct PointsCol {
    offsets: Vec<i32>,
    keys: StrCol,
    values: I64Col,
    validity: Validity,
}

impl Default for PointsCol {
    fn default() -> Self {
        PointsCol {
            offsets: vec![0],
            keys: StrCol::default(),
            values: I64Col::default(),
            validity: Validity::default(),
        }
    }
}

impl PointsCol {
    pub fn push(&mut self, value: Option<&[(String, i64)]>) {
        if let Some(entries) = value {
            for (key, points) in entries {
                self.keys.push(Some(key));
                self.values.push(Some(*points));
            }
        }
        self.offsets
            .push(i32::try_from(self.keys.len()).unwrap_or(i32::MAX));
        self.validity.push(value.is_some());
    }
}

impl Column for PointsCol {
    fn export<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let offsets = bytes_of(py, &self.offsets);
        let entries = payload(
            py,
            self.keys.len(),
            0,
            vec![None],
            vec![self.keys.export(py)?, self.values.export(py)?],
        )?;
        payload(
            py,
            self.offsets.len() - 1,
            self.validity.nulls,
            vec![self.validity.export(py), Some(offsets)],
            vec![entries],
        )
    }
}
