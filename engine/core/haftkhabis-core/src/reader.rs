//! Finding log files and reading their lines: directories, gzip, standard input.
