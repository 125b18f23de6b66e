//! The validator: lines in, one verdict per game out (notation.md, "The validator's verdict").
