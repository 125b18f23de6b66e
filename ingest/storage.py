"""Where a warehouse lives: a local folder or an `s3://bucket/prefix` URI, behind one interface.

Every reader and writer of table files goes through a `Location`: the URI and storage
options Delta (delta-rs) and polars take, the pyarrow file system Parquet parts are written
to and read from, and the few object operations a writer needs (write a whole object,
delete, list, copy a spool up or down). Nothing else in the code base joins table paths or
walks folders.

Credentials and endpoint come from the usual `AWS_*` environment (`AWS_ENDPOINT_URL`,
`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_REGION`,
`AWS_ALLOW_HTTP`), then `HAFTKHABIS_STORAGE_OPTIONS` (a JSON object, how the CLI hands
`--storage-option` to the dashboard's and the API's processes), then the options given
explicitly; later ones win.

Writes are atomic on both: a local file is written under a hidden temporary name and
renamed; an S3 object becomes visible only when its (multipart) upload completes.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import threading
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import pyarrow.fs as pafs

#: the threads that fsync written parts (`Location.sync_later`)
_SYNCS = ThreadPoolExecutor(4, thread_name_prefix="haftkhabis-fsync")


def _fsync(path: str) -> None:
    try:
        with open(path, "rb") as handle:
            os.fsync(handle.fileno())
    except FileNotFoundError:
        pass  # deleted before its turn (a part rewritten at once): nothing refers to it

OPTIONS_ENV = "HAFTKHABIS_STORAGE_OPTIONS"
#: the `AWS_*` variables read from the environment (the names delta-rs also takes)
AWS_ENV = ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
           "AWS_SESSION_TOKEN", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ALLOW_HTTP")


class StorageError(Exception):
    """The warehouse location or its options cannot be used."""


def parse_options(pairs: list[str] | None) -> dict[str, str]:
    """`KEY=VALUE` strings (the CLI's `--storage-option`) as a dict."""
    out: dict[str, str] = {}
    for pair in pairs or ():
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise StorageError(f"--storage-option takes KEY=VALUE, got {pair!r}")
        out[key.strip()] = value
    return out


def resolve_options(explicit: Mapping[str, str] | None = None) -> dict[str, str]:
    """The storage options in force: `AWS_*` environment, `HAFTKHABIS_STORAGE_OPTIONS`,
    then `explicit` (keys upper-cased, as delta-rs spells them)."""
    options = {k: v for k in AWS_ENV if (v := os.environ.get(k))}
    if "AWS_REGION" not in options and "AWS_DEFAULT_REGION" in options:
        options["AWS_REGION"] = options["AWS_DEFAULT_REGION"]
    options.pop("AWS_DEFAULT_REGION", None)
    env = os.environ.get(OPTIONS_ENV)
    if env:
        try:
            loaded = json.loads(env)
        except ValueError:
            raise StorageError(f"{OPTIONS_ENV} is not a JSON object") from None
        if not isinstance(loaded, dict):
            raise StorageError(f"{OPTIONS_ENV} is not a JSON object")
        options.update({str(k).upper(): str(v) for k, v in loaded.items()})
    options.update({k.upper(): v for k, v in (explicit or {}).items()})
    endpoint = options.get("AWS_ENDPOINT_URL", "")
    if endpoint.startswith("http://"):
        options.setdefault("AWS_ALLOW_HTTP", "true")
    return options


#: boto3 clients made, by storage options (`Location.s3_client`)
_CLIENTS: dict[tuple[tuple[str, str], ...], Any] = {}
_CLIENTS_GUARD = threading.Lock()


def is_remote(warehouse: str | os.PathLike[str]) -> bool:
    return str(warehouse).startswith("s3://")


@dataclass
class Location:
    """A warehouse's place: `uri` is an absolute local path or `s3://bucket/prefix`."""

    uri: str
    options: dict[str, str] = field(default_factory=dict)
    _fs: pafs.FileSystem | None = field(default=None, repr=False, compare=False)
    #: fsyncs of local files written, running (`sync_later`); awaited by `synced`
    _syncs: list[Future[None]] = field(default_factory=list, repr=False, compare=False)

    @classmethod
    def of(cls, warehouse: str | os.PathLike[str] | Location,
           storage_options: Mapping[str, str] | None = None) -> Location:
        if isinstance(warehouse, Location):
            return warehouse
        text = os.fspath(warehouse)
        if text.startswith("s3://"):
            parts = urlsplit(text)
            if not parts.netloc:
                raise StorageError(f"{text}: an S3 warehouse is s3://BUCKET/PREFIX")
            prefix = parts.path.strip("/")
            uri = f"s3://{parts.netloc}" + (f"/{prefix}" if prefix else "")
            return cls(uri, resolve_options(storage_options))
        if "://" in text:
            raise StorageError(f"{text}: a warehouse is a local folder or s3://BUCKET/PREFIX")
        return cls(os.path.abspath(os.path.expanduser(text)), {})

    @property
    def local(self) -> bool:
        return not self.uri.startswith("s3://")

    def __str__(self) -> str:
        return self.uri

    # -- names

    def join(self, *names: str) -> str:
        """The URI of a file or folder under the warehouse (`/`-separated names)."""
        return "/".join([self.uri, *(n.strip("/") for n in names if n)])

    def fs_path(self, uri: str) -> str:
        """`uri` as a path of `filesystem` (the bucket and key on S3)."""
        return uri.removeprefix("s3://")

    def delta_options(self) -> dict[str, str] | None:
        """Storage options for delta-rs and polars (None for a local folder)."""
        return None if self.local else dict(self.options)

    @property
    def filesystem(self) -> pafs.FileSystem:
        if self._fs is None:
            if self.local:
                self._fs = pafs.LocalFileSystem()
            else:
                opts = self.options
                kwargs: dict[str, Any] = {
                    "access_key": opts.get("AWS_ACCESS_KEY_ID"),
                    "secret_key": opts.get("AWS_SECRET_ACCESS_KEY"),
                    "session_token": opts.get("AWS_SESSION_TOKEN"),
                    "region": opts.get("AWS_REGION"),
                }
                endpoint = opts.get("AWS_ENDPOINT_URL")
                if endpoint:
                    split = urlsplit(endpoint)
                    kwargs["endpoint_override"] = split.netloc or endpoint
                    kwargs["scheme"] = split.scheme or "https"
                self._fs = pafs.S3FileSystem(**{k: v for k, v in kwargs.items() if v is not None})
        return self._fs

    def s3_client(self) -> Any:
        """A boto3 S3 client for this location's options (conditional puts: the lock),
        made once per process for the same options (boto3's clients are thread-safe;
        making one is not, and costs some 50 ms)."""
        key = tuple(sorted(self.options.items()))
        with _CLIENTS_GUARD:
            client = _CLIENTS.get(key)
            if client is None:
                import boto3

                opts = self.options
                client = boto3.session.Session().client(
                    "s3", endpoint_url=opts.get("AWS_ENDPOINT_URL"),
                    aws_access_key_id=opts.get("AWS_ACCESS_KEY_ID"),
                    aws_secret_access_key=opts.get("AWS_SECRET_ACCESS_KEY"),
                    aws_session_token=opts.get("AWS_SESSION_TOKEN"),
                    region_name=opts.get("AWS_REGION") or "us-east-1")
                _CLIENTS[key] = client
        return client

    def etag(self, uri: str) -> str | None:
        """The ETag of the object at `uri` (S3 only: one HEAD), or None when there is none
        or it cannot be asked (the caller then does without)."""
        bucket, key = self.bucket_key(uri)
        try:
            tag = self.s3_client().head_object(Bucket=bucket, Key=key).get("ETag")
        except Exception:  # not found, or unreachable: the caller's next request says which
            return None
        return tag if isinstance(tag, str) else None

    def bucket_key(self, uri: str) -> tuple[str, str]:
        bucket, _, key = uri.removeprefix("s3://").partition("/")
        return bucket, key

    # -- durability

    def sync_later(self, path: str) -> None:
        """fsync a local file written whole, in the background: the parts of a batch are
        synced together (a file system syncs many at once faster than one after the
        other), and `synced` waits for them before anything refers to them."""
        self._syncs.append(_SYNCS.submit(_fsync, path))

    def synced(self) -> None:
        """Wait until every file `sync_later` was given is on disk (the first error raised)."""
        pending, self._syncs = self._syncs, []
        for future in pending:
            future.result()

    # -- objects

    def makedirs(self, uri: str) -> None:
        if self.local:
            os.makedirs(uri, exist_ok=True)

    def size(self, uri: str) -> int:
        info = self.filesystem.get_file_info(self.fs_path(uri))
        if info.type == pafs.FileType.NotFound:
            raise FileNotFoundError(uri)
        return int(info.size or 0)

    def exists(self, uri: str) -> bool:
        return self.filesystem.get_file_info(self.fs_path(uri)).type != pafs.FileType.NotFound

    def delete(self, uri: str) -> None:
        try:
            self.filesystem.delete_file(self.fs_path(uri))
        except FileNotFoundError:
            pass
        except OSError as exc:
            if self.exists(uri):
                raise exc from None

    def delete_tree(self, uri: str) -> None:
        if self.local:
            shutil.rmtree(uri, ignore_errors=True)
            return
        if self.filesystem.get_file_info(self.fs_path(uri)).type != pafs.FileType.NotFound:
            self.filesystem.delete_dir(self.fs_path(uri))

    def list(self, uri: str, *, suffix: str = "", hidden: bool = False) -> Iterator[str]:
        """URIs of the files under `uri` (recursive) whose name ends in `suffix`
        (`hidden`: only names starting with a dot)."""
        selector = pafs.FileSelector(self.fs_path(uri), recursive=True, allow_not_found=True)
        for info in self.filesystem.get_file_info(selector):
            if info.type != pafs.FileType.File or not info.base_name.endswith(suffix):
                continue
            if hidden and not info.base_name.startswith("."):
                continue
            yield info.path if self.local else f"s3://{info.path}"

    def list_names(self, folder: str, prefix: str) -> Iterator[str]:
        """URIs of the files directly in `folder` whose name starts with `prefix` (on S3,
        one listing of just those keys)."""
        if self.local:
            with contextlib.suppress(FileNotFoundError), os.scandir(folder) as entries:
                for entry in entries:
                    if entry.name.startswith(prefix) and entry.is_file():
                        yield os.path.join(folder, entry.name)
            return
        bucket, key = self.bucket_key(folder)
        pages = self.s3_client().get_paginator("list_objects_v2").paginate(
            Bucket=bucket, Prefix=f"{key.rstrip('/')}/{prefix}")
        for page in pages:
            for item in page.get("Contents", ()):
                if "/" not in item["Key"][len(key.rstrip("/")) + 1:]:
                    yield f"s3://{bucket}/{item['Key']}"

    def put_file(self, local_path: str, uri: str) -> None:
        """Copy a local file to `uri` (one object: a plain PUT, multipart when large)."""
        if self.local:
            if os.path.abspath(local_path) != os.path.abspath(uri):
                os.makedirs(os.path.dirname(uri), exist_ok=True)
                shutil.copyfile(local_path, uri)
            return
        pafs.copy_files(local_path, self.fs_path(uri), source_filesystem=pafs.LocalFileSystem(),
                        destination_filesystem=self.filesystem)

    def put_files(self, pairs: Sequence[tuple[str, str]], *, compress: bool = False) -> None:
        """`put_file` for each (local path, uri), all at once (an upload waits on the
        store more than on this machine); `compress`: zstd on the way (`get_file` with
        `decompress` reads such an object back), a spool of log lines a seventh of its size."""
        put = self._put_compressed if compress else self.put_file
        if len(pairs) <= 1:
            for local_path, uri in pairs:
                put(local_path, uri)
            return
        with ThreadPoolExecutor(max_workers=min(len(pairs), 8), thread_name_prefix="put") as pool:
            for done in [pool.submit(put, local_path, uri) for local_path, uri in pairs]:
                done.result()

    def _put_compressed(self, local_path: str, uri: str) -> None:
        if self.local:
            os.makedirs(os.path.dirname(uri), exist_ok=True)
        with open(local_path, "rb") as source, \
                self.filesystem.open_output_stream(self.fs_path(uri), compression="zstd") as out:
            shutil.copyfileobj(source, out, COPY_CHUNK)

    def get_file(self, uri: str, local_path: str, *, decompress: bool = False) -> None:
        """Copy the object at `uri` to a local file (`decompress`: one `put_files` wrote
        compressed), in few large range reads: an object store answers each read with a
        request (1 MiB reads made a 94 MiB spool 94 requests and 18 s on the S3 emulator,
        which copies the whole object for each)."""
        if not decompress:
            pafs.copy_files(self.fs_path(uri), local_path, source_filesystem=self.filesystem,
                            destination_filesystem=pafs.LocalFileSystem(), chunk_size=GET_CHUNK)
            return
        with self.filesystem.open_input_stream(self.fs_path(uri), compression="zstd",
                                               buffer_size=GET_CHUNK) as source, \
                open(local_path, "wb") as out:
            shutil.copyfileobj(source, out, COPY_CHUNK)

    def write_bytes(self, uri: str, data: bytes) -> None:
        with self.filesystem.open_output_stream(self.fs_path(uri)) as out:
            out.write(data)


#: bytes a range read of `Location.get_file` asks for (and holds) at a time
GET_CHUNK = 32 * 2**20
#: bytes a stream copy holds at a time
COPY_CHUNK = 4 * 2**20


class AtomicOutput:
    """An output stream to `uri` that becomes visible whole or not at all: a temporary
    hidden file renamed on `commit` (local), or one object upload (S3)."""

    def __init__(self, location: Location, uri: str) -> None:
        self.location = location
        self.uri = uri
        if location.local:
            folder, name = os.path.split(uri)
            os.makedirs(folder, exist_ok=True)
            self.target = os.path.join(folder, f".{name}.tmp")
        else:
            self.target = location.fs_path(uri)
        self.stream: Any = location.filesystem.open_output_stream(self.target)
        self.closed = False

    def commit(self) -> int:
        """Close the stream, make the file visible; its size in bytes."""
        size = int(self.stream.tell())
        self.stream.close()
        self.closed = True
        if self.location.local:
            # visible now, on disk before any commit names it (Warehouse.commit and a
            # worker's result wait for `Location.synced`): a crash before leaves a part
            # nothing refers to, which `recover` removes with the batch it belonged to
            os.replace(self.target, self.uri)
            self.location.sync_later(self.uri)
        return size

    def abort(self) -> None:
        if not self.closed:
            # pyarrow's S3 stream cannot abort its upload: it completes, and is deleted
            with contextlib.suppress(OSError):
                self.stream.close()
            self.closed = True
        if self.location.local:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.target)
        else:
            self.location.delete(self.uri)
