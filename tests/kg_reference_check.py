"""Manual check: replay ``SCRIPTED_SESSION`` against the real reference server and ``KgModel``.

This is NOT a pytest test (it has no test functions and pytest does not collect it): it needs
``node`` and the npm package ``@modelcontextprotocol/server-memory`` (the model follows release
2026.8.31), which the test suite does not require. Run it from the repository root::

    python -m tests.kg_reference_check [SERVER]

``SERVER`` is the package directory (``.../node_modules/@modelcontextprotocol/server-memory``)
or its ``dist/index.js``; without it the script runs
``npx -y @modelcontextprotocol/server-memory@2026.8.31``. The server runs with
``MEMORY_FILE_PATH`` set to a file in a fresh temporary directory and is driven over stdio
(newline-delimited JSON-RPC: ``initialize``, ``notifications/initialized``, then one
``tools/call`` per scripted call).

For every call the script compares the real result with the model's: ``isError`` against whether
the model raised ``KgModelError``; on success, ``structuredContent`` against the model's dict; on
an error, whether the server's error text contains the model's message. It prints every call that
differs and exits with status 1 if any did, 0 otherwise.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import IO, Any

from tests.kg_model import SCRIPTED_SESSION, KgModel, KgModelError

PACKAGE = "@modelcontextprotocol/server-memory"
RELEASE = "2026.8.31"
PROTOCOL_VERSION = "2025-06-18"
TIMEOUT = 30.0  # seconds to wait for one answer


def server_command(argument: str | None) -> tuple[list[str], str]:
    """The command that starts the server, and a description of the package version run."""
    if argument is None:
        return ["npx", "-y", f"{PACKAGE}@{RELEASE}"], f"{PACKAGE}@{RELEASE} (npx)"
    path = Path(argument)
    if path.is_dir():
        path = path / "dist" / "index.js"
    package_json = path.parent.parent / "package.json"
    version = "unknown version"
    if package_json.is_file():
        version = json.loads(package_json.read_text(encoding="utf-8")).get("version", version)
    return ["node", str(path)], f"{PACKAGE} {version} ({path})"


class StdioServer:
    """A JSON-RPC peer over a child process's stdin/stdout, one JSON message per line."""

    def __init__(self, command: list[str], env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            text=True,
            encoding="utf-8",
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.stderr: list[str] = []
        assert self.process.stdout is not None and self.process.stderr is not None
        threading.Thread(target=self._pump, args=(self.process.stdout,), daemon=True).start()
        threading.Thread(target=self._drain, args=(self.process.stderr,), daemon=True).start()
        self.next_id = 0

    def _pump(self, stream: IO[str]) -> None:
        for line in stream:
            self.lines.put(line)
        self.lines.put(None)

    def _drain(self, stream: IO[str]) -> None:
        for line in stream:
            self.stderr.append(line)

    def _send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self._send(message)

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send one request and return its ``result`` (a JSON-RPC error raises RuntimeError)."""
        self.next_id += 1
        ident = self.next_id
        self._send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        while True:
            try:
                line = self.lines.get(timeout=TIMEOUT)
            except queue.Empty:
                raise RuntimeError(f"no answer to {method} within {TIMEOUT:g}s") from None
            if line is None:
                raise RuntimeError(f"the server ended; stderr:\n{''.join(self.stderr)}")
            if not line.strip():
                continue
            message = json.loads(line)
            if message.get("id") != ident or "method" in message:
                continue  # a notification or a request from the server: not our answer
            if "error" in message:
                raise RuntimeError(f"{method}: JSON-RPC error {message['error']}")
            result: dict[str, Any] = message["result"]
            return result

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def error_text(result: dict[str, Any]) -> str:
    return "\n".join(
        item.get("text", "") for item in result.get("content", []) if item.get("type") == "text"
    )


def compare(
    real: dict[str, Any], model_result: dict[str, Any] | None, model_error: str | None
) -> str | None:
    """A description of how the real result differs from the model's, or None if it does not."""
    real_error = bool(real.get("isError"))
    if model_error is not None:
        if not real_error:
            return (
                f"the model fails ({model_error!r}) but the server succeeds with "
                f"{json.dumps(real.get('structuredContent'), ensure_ascii=False)}"
            )
        text = error_text(real)
        if model_error not in text:
            return f"error texts differ: server {text!r}, model {model_error!r}"
        return None
    if real_error:
        return (
            f"the server fails ({error_text(real)!r}) but the model succeeds with "
            f"{json.dumps(model_result, ensure_ascii=False)}"
        )
    structured = real.get("structuredContent")
    if structured != model_result:
        return (
            "results differ:\n"
            f"      server: {json.dumps(structured, ensure_ascii=False)}\n"
            f"      model:  {json.dumps(model_result, ensure_ascii=False)}"
        )
    return None


def main(argv: list[str]) -> int:
    if len(argv) > 1 or (argv and argv[0] in ("-h", "--help")):
        print(__doc__)
        return 2
    command, described = server_command(argv[0] if argv else None)
    with tempfile.TemporaryDirectory(prefix="kg-reference-") as directory:
        env = dict(os.environ, MEMORY_FILE_PATH=str(Path(directory) / "memory.jsonl"))
        server = StdioServer(command, env)
        try:
            init = server.request(
                "initialize",
                {
                    "protocolVersion": PROTOCOL_VERSION,
                    "capabilities": {},
                    "clientInfo": {"name": "kg_reference_check", "version": "1"},
                },
            )
            server.notify("notifications/initialized")
            info = init.get("serverInfo", {})
            print(f"server: {described}")
            print(
                f"        serverInfo {info.get('name')} {info.get('version')}, "
                f"protocol {init.get('protocolVersion')}"
            )
            listed = {tool["name"] for tool in server.request("tools/list", {})["tools"]}
            model = KgModel()
            differences = 0
            errors = 0
            for index, (tool, arguments) in enumerate(SCRIPTED_SESSION, start=1):
                model_result: dict[str, Any] | None = None
                model_error: str | None = None
                try:
                    model_result = model.call(tool, arguments)
                except KgModelError as exc:
                    model_error = str(exc)
                    errors += 1
                real = server.request("tools/call", {"name": tool, "arguments": arguments})
                difference = compare(real, model_result, model_error)
                if difference is not None:
                    differences += 1
                    print(
                        f"DIFFERS  call {index} {tool} {json.dumps(arguments, ensure_ascii=False)}"
                    )
                    print(f"    {difference}")
        finally:
            server.close()
    used = {tool for tool, _ in SCRIPTED_SESSION}
    if used != listed:
        print(f"tools the server lists but the session does not call: {sorted(listed - used)}")
        print(f"tools the session calls but the server does not list: {sorted(used - listed)}")
        differences += 1
    print(
        f"{len(SCRIPTED_SESSION)} calls ({errors} expected errors) over {len(used)} tools: "
        f"{differences} differ"
    )
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
