"""``memex serve``: a local, read-only web inspector of a durable store (the ``web`` extra).

The application itself is :mod:`memex.web`; this module checks the
arguments, opens the store read-only, binds the socket and runs uvicorn.
Starlette, Jinja2 and uvicorn are imported only when the command runs, so
the rest of the command line works without the extra.
"""

from __future__ import annotations

import argparse
import importlib
import os
import secrets
import socket
from typing import Any
from urllib.parse import quote

from memex.cli.app import CliError, Context, db_arguments, db_label, one_line, subcommand
from memex.errors import MissingDependencyError

__all__ = ["cmd_serve", "DEFAULT_HOST", "DEFAULT_PORT", "serve_socket"]

#: The address ``memex serve`` binds unless ``--host`` names another.
DEFAULT_HOST = "127.0.0.1"
#: The port ``memex serve`` listens on unless ``--port`` names another.
DEFAULT_PORT = 8765
_GENERATE = object()  # --token given without a value: make one up


def _serve_arguments(parser: argparse.ArgumentParser) -> None:
    db_arguments(parser, required=True)
    parser.add_argument(
        "--host",
        metavar="ADDRESS",
        default=DEFAULT_HOST,
        help=f"the address to listen on (default {DEFAULT_HOST}, this machine only); any "
        "other than a loopback address needs a token",
    )
    parser.add_argument(
        "--port",
        metavar="N",
        type=int,
        default=DEFAULT_PORT,
        help=f"the port (default {DEFAULT_PORT}; 0 = any free port)",
    )
    parser.add_argument(
        "--allow-host",
        metavar="NAME",
        action="append",
        default=[],
        help="also answer requests whose Host header is NAME (repeatable); any other Host "
        "is refused with 400, against DNS rebinding",
    )
    parser.add_argument(
        "--token",
        metavar="TOKEN",
        nargs="?",
        const=_GENERATE,
        default=None,
        help="require this token (Authorization: Bearer TOKEN, or ?token=TOKEN once, which "
        "sets a cookie); without a value one is made up and printed; default the "
        "environment variable MEMEX_SERVE_TOKEN",
    )


def _import(module: str, package: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as e:
        name = getattr(e, "name", None) or package
        missing = MissingDependencyError(name, "web", "memex serve")
        raise CliError(
            f"{missing} (the 'web' extra: Starlette, Jinja2, uvicorn; from a clone of the "
            "repository: pip install '.[web]')"
        ) from None


def serve_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket bound to ``host``:``port`` (IPv6 for an address with ``:``).

    Raises:
        CliError: the address cannot be bound (in use, not an address of this
            machine, a port out of range), exit code 2.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host.strip("[]"), port))
        sock.listen(128)
    except (OSError, OverflowError) as e:
        sock.close()
        raise CliError(f"serve: cannot listen on {host} port {port}: {e}") from None
    return sock


def _started(web: Any, db: str, host: str, port: int, token: str | None, allowed: list[str]) -> str:
    """The lines ``memex serve`` prints once listening: the address to open (for a
    wildcard ``--host``, the machine's own address, since ``0.0.0.0`` is no address a
    client can open), the token URL-encoded in it, and which ``Host`` names answer."""
    reachable = web.security.machine_addresses(host)
    at = reachable[0] if reachable else ("127.0.0.1" if web.security.is_wildcard(host) else host)
    shown = f"[{at}]" if ":" in at else at
    query = f"?token={quote(token, safe='')}" if token else ""
    text = (
        f"memex serve: {db_label(db)} read-only at http://{shown}:{port}/{query}  (Ctrl-C stops)\n"
    )
    if web.security.is_wildcard(host):
        names = ", ".join([*reachable, "localhost", *allowed])
        text += (
            f"memex serve: listening on every interface ({host}); it answers to {names}; "
            "a name clients use (the machine's DNS name) must be added with --allow-host NAME\n"
        )
    return text


@subcommand(
    "serve",
    "a read-only web inspector of a store: overview, search, items, history, log, "
    "time travel (extra 'web')",
    _serve_arguments,
)
def cmd_serve(args: argparse.Namespace, ctx: Context) -> int:
    """``memex serve --db DB [--as-of WHEN] [--no-snapshot] [--host ADDRESS] [--port N]
    [--allow-host NAME]... [--token [TOKEN]]``.

    Opens the store read-only (it must exist) and serves the inspector of
    :mod:`memex.web` until Ctrl-C. ``--as-of`` sets the position shown when a
    page names none (without it, the head, followed live). The address
    printed on stderr opens it (with ``?token=...`` when a token is set).

    Safe by default: it listens on 127.0.0.1; a request whose ``Host``
    header is not the address served (or a loopback name, or a name of
    ``--allow-host``) is refused; a non-loopback ``--host`` needs a token
    (``--token`` or ``MEMEX_SERVE_TOKEN``) of at least 16 characters and
    refuses to start without one. For ``--host 0.0.0.0`` (or ``::``) the
    address printed is the machine's own (the requests to its own addresses
    are accepted; a DNS name clients use needs ``--allow-host``). The token
    is URL-encoded in the address printed.

    Returns:
        0 when stopped (Ctrl-C, or SIGTERM).
    Raises:
        CliError: the ``web`` extra is not installed; a non-loopback
            ``--host`` without a token, or with one shorter than 16 characters; a token with a space, quote, ``;``
            or ``,``; a port out of 0..65535 or one that cannot be bound; a
            malformed ``--as-of`` (exit code 2).
        FileAccessError, StorageError: the store cannot be opened (exit code 2).
    """
    token: str | None
    if args.token is _GENERATE:
        token = secrets.token_urlsafe(24)
    else:
        token = args.token if args.token is not None else os.environ.get("MEMEX_SERVE_TOKEN")
    token = token or None
    if not 0 <= args.port <= 65535:
        raise CliError("serve: --port must be from 0 to 65535")
    web = _import("memex.web", "starlette")
    uvicorn = _import("uvicorn", "uvicorn")
    try:
        token = web.check_token(token)
    except ValueError as e:
        raise CliError(f"serve: --token: {str(e).removeprefix('token: ')}") from None
    refusal = web.bind_rule(args.host, token)
    if refusal is not None:
        raise CliError(f"serve: {refusal}")
    try:
        source = web.StoreSource.open(args.db, as_of=args.as_of, snapshots=not args.no_snapshot)
    except web.BadParameter as e:
        raise CliError(
            f"--as-of {one_line(args.as_of[:80])}: {str(e).removeprefix('as_of: ')}"
        ) from None
    source.settle()
    try:
        sock = serve_socket(args.host, args.port)
        port = sock.getsockname()[1]
        app = web.create_app(source, host=args.host, allow_hosts=args.allow_host, token=token)
        ctx.stderr.write(_started(web, args.db, args.host, port, token, args.allow_host))
        ctx.stderr.flush()
        config = uvicorn.Config(
            app, log_level="warning", access_log=False, server_header=False, lifespan="off"
        )
        try:
            uvicorn.Server(config).run(sockets=[sock])
        except KeyboardInterrupt:  # Ctrl-C: uvicorn shut down, then raised the signal again
            pass
        finally:
            sock.close()
    finally:
        source.close()
    return 0
