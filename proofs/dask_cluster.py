"""Reaching a Dask scheduler and reading what it did: the cluster side of :mod:`proofs.distributed`.

- the address of a scheduler (:func:`scheduler_address`: ``tcp://`` or ``tls://HOST:PORT``,
  one-line :class:`InputError` otherwise) and a connection bounded at every step
  (:func:`preflight`, a plain socket that reads the Dask handshake; :func:`connect`);
  :func:`local_cluster` for a run without a scheduler;
- what the scheduler records: the start marker each unit sends (:func:`mark_start`,
  counted by :func:`started`), the re-assignments in its transition log (:func:`reruns`),
  its ``allowed-failures`` (:func:`allowed_failures`), the worker a unit ran on
  (:func:`worker_address`).

Dask is imported only inside functions: the rest of the kit works without it.
"""

from __future__ import annotations

import os
import re
import socket
import struct
import time

from hasse.theory.errors import InputError

HANDSHAKE_BYTES = 1 << 16  # a scheduler's first message (its handshake) is about 60 bytes
# a scheduler address: tcp:// or tls:// (inproc:// names this process; ws:// and ucx:// are not used), HOST:PORT
_ADDRESS = re.compile(r"(tcp|tls)://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252}[A-Za-z0-9])?):([0-9]+)")


def mark_start(topic: str, label: str) -> None:
    """Tell the scheduler that this unit starts (an event on ``topic``): the attempt markers of :func:`started`."""
    try:
        from distributed import get_worker

        get_worker().log_event(topic, {"unit": label, "pid": os.getpid()})
    except (ImportError, ValueError):
        pass


def started(client, topic: str, labels) -> dict[str, int] | None:
    """How many times each unit of ``labels`` started, by the markers its runs sent (None if unreadable).

    A unit sends its marker as it begins; a worker that dies in the same instant may
    take an unsent marker with it, so the counts are at least 1 for every finished unit
    and may miss such a start, never add one.
    """
    try:
        events = client.get_events(topic)
    except Exception:
        return None
    counts = {x: 0 for x in labels}
    for _, msg in events:
        if isinstance(msg, dict) and msg.get("unit") in counts:
            counts[msg["unit"]] += 1
    return counts


def worker_address() -> str | None:
    try:
        from distributed import get_worker

        return get_worker().address
    except (ImportError, ValueError):
        return None


def scheduler_address(text) -> tuple[str, str, int]:
    """``(scheme, host, port)`` of a scheduler address ``tcp://HOST:PORT`` or ``tls://HOST:PORT``, 1 <= PORT <= 65535.

    Anything else is an :class:`InputError` of one line, before anything connects.

    >>> scheduler_address("tcp://10.0.0.5:8786"), scheduler_address("tls://[::1]:8786")
    (('tcp', '10.0.0.5', 8786), ('tls', '::1', 8786))
    >>> scheduler_address("tcp://127.0.0.1:70000")
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: --scheduler 'tcp://127.0.0.1:70000': port 70000 is not in 1 … 65535
    >>> scheduler_address("inproc://x")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: --scheduler 'inproc://x': not an address tcp://HOST:PORT or tls://HOST:PORT ...
    """
    shown = repr(text) if len(str(text)) <= 80 else repr(str(text)[:80]) + " …"
    found = _ADDRESS.fullmatch(text) if isinstance(text, str) else None
    if found is None:
        raise InputError(f"--scheduler {shown}: not an address tcp://HOST:PORT or tls://HOST:PORT "
                         "(the address a Dask scheduler prints, e.g. tcp://10.0.0.5:8786)")
    scheme, host, digits = found.group(1), found.group(2).strip("[]"), found.group(3)
    port = int(digits) if len(digits) <= 6 else 0  # never int() of thousands of digits
    if not 1 <= port <= 65535:
        raise InputError(f"--scheduler {shown}: port {digits if len(digits) <= 20 else digits[:20] + ' …'} "
                         "is not in 1 … 65535")
    return scheme, host, port


def preflight(address: str, seconds: float) -> None:
    """:class:`InputError` unless a Dask scheduler answers at ``address`` within ``seconds``.

    A plain socket first, with ``seconds`` for the connection and for every read: a
    ``tcp://`` scheduler sends its handshake as soon as a peer connects (an 8-byte
    length, then frames: a count, their lengths, a msgpack map naming ``pickle-protocol``),
    so a server that accepts and stays silent, or that answers anything else (random
    bytes would make Dask allocate the length they declare), is refused here, reading
    at most :data:`HANDSHAKE_BYTES`. A ``tls://`` scheduler waits for the TLS handshake:
    only the connection is checked, Dask's own bounded connect does the rest.
    """
    scheme, host, port = scheduler_address(address)
    deadline = time.monotonic() + seconds
    where = f"--scheduler {address}"
    try:
        sock = socket.create_connection((host, port), timeout=max(seconds, 0.01))
    except (OSError, ValueError) as exc:
        reason = (f"no answer within {seconds:g} s" if isinstance(exc, TimeoutError)
                  else getattr(exc, "strerror", None) or exc)
        raise InputError(f"{where}: cannot connect ({reason})") from None
    try:
        if scheme != "tcp":
            return

        def read(count: int) -> bytes:
            data = b""
            while len(data) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError
                sock.settimeout(left)
                chunk = sock.recv(count - len(data))
                if not chunk:
                    raise ConnectionError("the server closed the connection")
                data += chunk
            return data

        try:
            (length,) = struct.unpack("<Q", read(8))
            if not 16 <= length <= HANDSHAKE_BYTES:
                raise ValueError(f"its first message declares {length:,} bytes")
            body = read(length)
            (count,) = struct.unpack_from("<Q", body)
            if not 1 <= count <= 64 or 8 * (count + 1) > length:
                raise ValueError(f"its first message declares {count:,} frames")
            sizes = struct.unpack_from(f"<{count}Q", body, 8)
            if 8 * (count + 1) + sum(sizes) != length or b"pickle-protocol" not in body:
                raise ValueError("its first message is not a Dask handshake")
        except TimeoutError:
            raise InputError(f"{where}: connected, but no Dask handshake within {seconds:g} s "
                             "(is it a Dask scheduler?)") from None
        except (OSError, ValueError, struct.error) as exc:
            raise InputError(f"{where}: does not answer as a Dask scheduler ({exc})") from None
    finally:
        sock.close()


def connect(address: str, seconds: float):
    """A ``distributed.Client`` of the scheduler at ``address``, every step bounded by ``seconds``; else InputError.

    :func:`preflight` first, then Dask's connect with ``timeout=seconds``; whatever it
    raises (a refused TLS handshake, a garbled answer, a timeout) is one line.
    """
    from distributed import Client

    start = time.monotonic()
    preflight(address, seconds)
    left = max(seconds - (time.monotonic() - start), 1.0)
    try:
        return Client(address, timeout=left)
    except Exception as exc:  # noqa: BLE001 (any failure to connect is the same refusal)
        reason = str(exc).splitlines()[0][:160] if str(exc) else type(exc).__name__
        raise InputError(f"--scheduler {address}: cannot connect ({reason})") from None


def local_cluster(workers: int):
    """A ``LocalCluster`` of ``workers`` processes, one thread each, quiet, no dashboard, nothing on a fixed port."""
    from distributed import LocalCluster

    return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                        worker_dashboard_address=None, scheduler_kwargs={"dashboard_address": ":0"}, silence_logs=40)


def allowed_failures(dask_scheduler=None):
    return getattr(dask_scheduler, "allowed_failures", None)


def reruns(client, keys) -> int | None:
    """How many times the scheduler handed the tasks ``keys`` out again (lost workers), or None if unknown.

    Read from the scheduler's transition log (``Scheduler.story``): every assignment of a
    task to a worker is a transition into ``processing``. A worker may hold a task
    assigned but not yet begun (one thread, a short queue), so this counts
    re-assignments; :func:`started` counts the runs that had begun.
    """
    def count(keys, dask_scheduler=None):
        starts = {k: 0 for k in keys}
        for entry in dask_scheduler.story(*keys):
            key, finish = entry[0], entry[2]
            if key in starts and finish == "processing":
                starts[key] += 1
        if any(v == 0 for v in starts.values()):
            return None  # the log no longer holds every task (too long a run): no guess
        return sum(v - 1 for v in starts.values())

    try:
        return client.run_on_scheduler(count, list(keys))
    except Exception:  # an older scheduler without story(): record nothing rather than a guess
        return None
