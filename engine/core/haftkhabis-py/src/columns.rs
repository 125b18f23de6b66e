//! Arrow columns built in Rust, handed to pyarrow as buffers.
//!
//! Each builder lays its values out as the Arrow columnar format does (a validity bitmap,
//! 32-bit offsets, values), so pyarrow's `Array.from_buffers` takes them as they are. A
//! builder's vectors are moved, not copied, into [`ColumnBuffer`]s that lend their bytes
//! to Python through the buffer protocol: `pa.py_buffer` wraps them without a copy and
//! the memory goes when the last array using it does. A column goes to Python as
//! `(length, null_count, [buffers], [children])` (`engine/_core.pyi`: `ColumnData`);
//! `ingest/columns.py` turns it into a pyarrow array of its declared type (each builder's
//! [`Column::TYPE`]: the type `ingest.rs`'s table declarations export and
//! `ingest/schema.py` builds the tables' schemas from).

use std::ffi::{c_int, c_void};

use pyo3::exceptions::PyBufferError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

/// The values a [`ColumnBuffer`] owns, in Arrow's little-endian layout.
enum Owned {
    Bytes(Vec<u8>),
    I8(Vec<i8>),
    I32(Vec<i32>),
    I64(Vec<i64>),
}

/// One Arrow buffer (a bitmap, offsets, values), owned by Rust and lent read-only to
/// Python through the buffer protocol.
#[pyclass(module = "engine._core", frozen)]
pub struct ColumnBuffer {
    owned: Owned,
}

impl ColumnBuffer {
    /// A vector's values, its spare capacity given back first: the buffer may outlive the
    /// batch by a while (a writer gathers batches into row groups), and a vector grown by
    /// doubling can hold twice what it uses (glibc shrinks it in place).
    fn bytes(mut values: Vec<u8>) -> Self {
        values.shrink_to_fit();
        ColumnBuffer {
            owned: Owned::Bytes(values),
        }
    }

    /// Where the bytes are and how many.
    fn span(&self) -> (*const u8, usize) {
        match &self.owned {
            Owned::Bytes(v) => (v.as_ptr(), v.len()),
            Owned::I8(v) => (v.as_ptr().cast(), v.len()),
            Owned::I32(v) => (v.as_ptr().cast(), std::mem::size_of_val(v.as_slice())),
            Owned::I64(v) => (v.as_ptr().cast(), std::mem::size_of_val(v.as_slice())),
        }
    }
}

#[pymethods]
impl ColumnBuffer {
    /// # Safety
    /// Called by CPython with a view to fill. The bytes stay put: the buffer is frozen and
    /// `PyBuffer_FillInfo` keeps a reference to it in the view until it is released.
    unsafe fn __getbuffer__(
        slf: Bound<'_, Self>,
        view: *mut ffi::Py_buffer,
        flags: c_int,
    ) -> PyResult<()> {
        if view.is_null() {
            return Err(PyBufferError::new_err("no view to fill"));
        }
        let (data, len) = slf.get().span();
        let len = ffi::Py_ssize_t::try_from(len)
            .map_err(|_| PyBufferError::new_err("buffer too large"))?;
        // SAFETY: `view` is CPython's, non-null; `data` lives as long as `slf`, which the
        // view holds; the memory is lent read-only (a writable request is refused).
        let filled = unsafe {
            ffi::PyBuffer_FillInfo(view, slf.as_ptr(), data as *mut c_void, len, 1, flags)
        };
        if filled == -1 {
            return Err(PyErr::fetch(slf.py()));
        }
        Ok(())
    }

    fn __len__(&self) -> usize {
        self.span().1
    }
}

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
    fn export(&mut self) -> Option<ColumnBuffer> {
        let bits = std::mem::take(&mut self.bits);
        (self.nulls > 0).then(|| ColumnBuffer::bytes(bits))
    }
}

/// Fixed-width values, moved into a buffer in Arrow's little-endian layout.
fn buffer_of<T: Primitive>(values: &mut Vec<T>) -> ColumnBuffer {
    let mut values = std::mem::take(values);
    values.shrink_to_fit(); // as in `ColumnBuffer::bytes`
    for value in &mut values {
        *value = value.to_le(); // nothing to do on a little-endian machine
    }
    T::buffer(values)
}

fn payload<'py>(
    py: Python<'py>,
    length: usize,
    nulls: usize,
    buffers: Vec<Option<ColumnBuffer>>,
    children: Vec<Bound<'py, PyTuple>>,
) -> PyResult<Bound<'py, PyTuple>> {
    let buffers = buffers
        .into_iter()
        .map(|b| b.map(|b| Bound::new(py, b)).transpose())
        .collect::<PyResult<Vec<_>>>()?;
    let buffers = PyList::new(py, buffers)?;
    let children = PyList::new(py, children)?;
    (length, nulls, buffers, children).into_pyobject(py)
}

/// Anything that becomes one Arrow column; exporting moves its values out (the builder
/// is left empty).
pub trait Column {
    /// The Arrow type of the column, as `engine._core.warehouse_columns()` names it (and
    /// `ingest/schema.py` maps to a pyarrow type): the builder's layout is that type's.
    const TYPE: &'static str;
    /// The nulls pushed so far.
    fn nulls(&self) -> usize;
    fn export<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>>;
}

/// A fixed-width Arrow value.
pub trait Primitive: Copy + Default {
    /// The value in little-endian byte order (Arrow's).
    fn to_le(self) -> Self;
    fn buffer(values: Vec<Self>) -> ColumnBuffer;
}

impl Primitive for i64 {
    fn to_le(self) -> Self {
        i64::to_le(self)
    }
    fn buffer(values: Vec<Self>) -> ColumnBuffer {
        ColumnBuffer {
            owned: Owned::I64(values),
        }
    }
}

impl Primitive for i32 {
    fn to_le(self) -> Self {
        i32::to_le(self)
    }
    fn buffer(values: Vec<Self>) -> ColumnBuffer {
        ColumnBuffer {
            owned: Owned::I32(values),
        }
    }
}

impl Primitive for i8 {
    fn to_le(self) -> Self {
        self
    }
    fn buffer(values: Vec<Self>) -> ColumnBuffer {
        ColumnBuffer {
            owned: Owned::I8(values),
        }
    }
}

/// Fixed-width integers: `int64`, `int32`, `int8`.
#[derive(Default)]
pub struct IntCol<T: Primitive> {
    values: Vec<T>,
    validity: Validity,
}

/// 64-bit integers (`int64`).
pub type I64Col = IntCol<i64>;
/// 32-bit integers (`int32`).
pub type I32Col = IntCol<i32>;
/// 8-bit integers (`int8`): card codes.
pub type I8Col = IntCol<i8>;

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

impl IntCol<i8> {
    pub fn push(&mut self, value: Option<i8>) {
        self.values.push(value.unwrap_or(0));
        self.validity.push(value.is_some());
    }

    fn len(&self) -> usize {
        self.values.len()
    }
}

impl<T: Primitive> IntCol<T> {
    fn export_values<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let mut this = std::mem::take(self);
        let length = this.values.len();
        let values = buffer_of(&mut this.values);
        payload(
            py,
            length,
            this.validity.nulls,
            vec![this.validity.export(), Some(values)],
            vec![],
        )
    }
}

impl Column for IntCol<i64> {
    const TYPE: &'static str = "int64";
    fn nulls(&self) -> usize {
        self.validity.nulls
    }
    fn export<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        self.export_values(py)
    }
}

impl Column for IntCol<i32> {
    const TYPE: &'static str = "int32";
    fn nulls(&self) -> usize {
        self.validity.nulls
    }
    fn export<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        self.export_values(py)
    }
}

impl Column for IntCol<i8> {
    const TYPE: &'static str = "int8";
    fn nulls(&self) -> usize {
        self.validity.nulls
    }
    fn export<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        self.export_values(py)
    }
}

/// Instants in microseconds since the epoch, UTC (`timestamp[us, UTC]`: 64-bit integers).
#[derive(Default)]
pub struct TsCol(I64Col);

impl TsCol {
    pub fn push(&mut self, micros: Option<i64>) {
        self.0.push(micros);
    }
}

impl Column for TsCol {
    const TYPE: &'static str = "timestamp[us, UTC]";
    fn nulls(&self) -> usize {
        self.0.nulls()
    }
    fn export<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        self.0.export(py)
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
    const TYPE: &'static str = "bool";
    fn nulls(&self) -> usize {
        self.validity.nulls
    }
    fn export<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let mut this = std::mem::take(self);
        let values = ColumnBuffer::bytes(std::mem::take(&mut this.values.bits));
        payload(
            py,
            this.values.len,
            this.validity.nulls,
            vec![this.validity.export(), Some(values)],
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
    const TYPE: &'static str = "string";
    fn nulls(&self) -> usize {
        self.validity.nulls
    }
    fn export<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let mut this = std::mem::take(self);
        let length = this.len();
        let offsets = buffer_of(&mut this.offsets);
        let data = ColumnBuffer::bytes(std::mem::take(&mut this.data));
        payload(
            py,
            length,
            this.validity.nulls,
            vec![this.validity.export(), Some(offsets), Some(data)],
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
    const TYPE: &'static str = "list<string>";
    fn nulls(&self) -> usize {
        self.validity.nulls
    }
    fn export<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let mut this = std::mem::take(self);
        let length = this.offsets.len() - 1;
        let offsets = buffer_of(&mut this.offsets);
        payload(
            py,
            length,
            this.validity.nulls,
            vec![this.validity.export(), Some(offsets)],
            vec![this.items.export(py)?],
        )
    }
}

/// Lists of 8-bit integers (`list<int8>`): a hand's or a stock's card codes.
pub struct I8ListCol {
    offsets: Vec<i32>,
    items: I8Col,
    validity: Validity,
}

impl Default for I8ListCol {
    fn default() -> Self {
        I8ListCol {
            offsets: vec![0],
            items: I8Col::default(),
            validity: Validity::default(),
        }
    }
}

impl I8ListCol {
    pub fn push(&mut self, value: Option<&[i8]>) {
        if let Some(items) = value {
            for &item in items {
                self.items.push(Some(item));
            }
        }
        self.offsets
            .push(i32::try_from(self.items.len()).unwrap_or(i32::MAX));
        self.validity.push(value.is_some());
    }
}

impl Column for I8ListCol {
    const TYPE: &'static str = "list<int8>";
    fn nulls(&self) -> usize {
        self.validity.nulls
    }
    fn export<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let mut this = std::mem::take(self);
        let length = this.offsets.len() - 1;
        let offsets = buffer_of(&mut this.offsets);
        payload(
            py,
            length,
            this.validity.nulls,
            vec![this.validity.export(), Some(offsets)],
            vec![this.items.export(py)?],
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
    pub fn push<S: AsRef<str>>(&mut self, value: Option<&[(S, i64)]>) {
        if let Some(entries) = value {
            for (key, points) in entries {
                self.keys.push(Some(key.as_ref()));
                self.values.push(Some(*points));
            }
        }
        self.offsets
            .push(i32::try_from(self.keys.len()).unwrap_or(i32::MAX));
        self.validity.push(value.is_some());
    }
}

impl Column for PointsCol {
    const TYPE: &'static str = "map<string, int64>";
    fn nulls(&self) -> usize {
        self.validity.nulls
    }
    fn export<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let mut this = std::mem::take(self);
        let length = this.offsets.len() - 1;
        let offsets = buffer_of(&mut this.offsets);
        let entries = payload(
            py,
            this.keys.len(),
            0,
            vec![None],
            vec![this.keys.export(py)?, this.values.export(py)?],
        )?;
        payload(
            py,
            length,
            this.validity.nulls,
            vec![this.validity.export(), Some(offsets)],
            vec![entries],
        )
    }
}
