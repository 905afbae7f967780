#!/usr/bin/env python3
"""A throwaway local MariaDB for the world database (development and tests only).

    dev_world_db.py init    [--directory D] [--port P] [--database DB ...] (rerun keeps port+grants)
    dev_world_db.py start   [--directory D]
    dev_world_db.py stop    [--directory D]
    dev_world_db.py status  [--directory D]
    dev_world_db.py restore [--directory D] --dump FILE

Everything lives in one directory (default ``service-data/research/world-db``
of the repository, git-ignored): ``my.cnf``, the datadir ``data/``, the unix socket, the pid file,
the error log and ``reader.local.txt`` (the reader password, mode 0600, no
trailing newline). The server listens on 127.0.0.1 only, on a non-default
port (33079), with ``read_only=ON``.

The reader account ``viano_reader`` (@127.0.0.1 and @localhost) gets
``SELECT`` on the given databases and nothing else: no GRANT OPTION, no
global privileges. The admin is the operating-system user connecting through
the unix socket (``unix_socket`` authentication, no admin password at all).

The tool installs nothing: it looks for ``mariadbd``/``mysqld``,
``mariadb-install-db``/``mysql_install_db`` and the ``mariadb``/``mysql``
client in PATH, /usr/sbin and /usr/bin (``apt-get install mariadb-server``).
It refuses to administer a port that belongs to a server whose datadir is
not ours. ``restore`` is a development tool: it switches ``read_only`` off
for the load and on again; nothing in the analysis program calls it.

Standard library only, so it runs before any virtualenv exists.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DIRECTORY = REPO / "service-data" / "research" / "world-db"
DEFAULT_PORT = 33079
DEFAULT_DATABASES = ("cata_world",)
READER = "viano_reader"
READER_HOSTS = ("127.0.0.1", "localhost")
BIND = "127.0.0.1"
SEARCH_DIRS = ("/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin")
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_$]{0,63}")
START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 60.0


class AdminError(Exception):
    """A refused or failed administrative step; the message says what to do."""


# --- locating the binaries ------------------------------------------------------------------


def find_binary(*names: str) -> str:
    for name in names:
        found = shutil.which(name)
        if found:
            return found
        for directory in SEARCH_DIRS:
            candidate = Path(directory) / name
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return str(candidate)
    raise AdminError(
        f"none of {', '.join(names)} found in PATH or {', '.join(SEARCH_DIRS)}; "
        "install the server first, e.g. `apt-get install mariadb-server`"
    )


def server_binary() -> str:
    return find_binary("mariadbd", "mysqld")


def install_db_binary() -> str:
    return find_binary("mariadb-install-db", "mysql_install_db")


def client_binary() -> str:
    return find_binary("mariadb", "mysql")


# --- the directory --------------------------------------------------------------------------


class Instance:
    """The files of one throwaway server, all inside ``directory``."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory.resolve()
        self.datadir = self.directory / "data"
        self.config = self.directory / "my.cnf"
        self.socket = self.directory / "mariadb.sock"
        self.pid_file = self.directory / "mariadb.pid"
        self.log = self.directory / "mariadb.log"
        self.password_file = self.directory / "reader.local.txt"
        self.state_file = self.directory / "instance.json"

    @property
    def initialized(self) -> bool:
        return (self.datadir / "mysql").is_dir() and self.config.is_file()

    def state(self) -> dict[str, object]:
        if not self.state_file.is_file():
            raise AdminError(f"{self.directory} is not initialized; run `init` first")
        return dict(json.loads(self.state_file.read_text()))

    @property
    def port(self) -> int:
        return int(str(self.state()["port"]))

    def admin_user(self) -> str:
        return "root" if os.geteuid() == 0 else _whoami()

    def write_config(self, port: int) -> None:
        socket_path = str(self.socket)
        if len(socket_path.encode()) > 100:  # sun_path is 108 bytes on Linux
            raise AdminError(f"socket path too long for a unix socket: {socket_path}")
        lines = [
            "# Written by scripts/dev_world_db.py; a throwaway development server.",
            "[mysqld]",
            f"datadir={self.datadir}",
            f"socket={self.socket}",
            f"pid-file={self.pid_file}",
            f"log-error={self.log}",
            f"port={port}",
            f"bind-address={BIND}",
            "skip-name-resolve",
            "skip-log-bin",
            "read_only=ON",
            "character-set-server=utf8mb4",
            "collation-server=utf8mb4_unicode_ci",
            "innodb_buffer_pool_size=64M",
            "innodb_log_file_size=16M",
            "innodb_flush_log_at_trx_commit=2",
            "max_connections=64",
            "performance_schema=OFF",
        ]
        if os.geteuid() == 0:
            lines.append("user=root")
        self.config.write_text("\n".join(lines) + "\n")


def _whoami() -> str:
    import pwd

    return pwd.getpwuid(os.geteuid()).pw_name


def _quote(value: str) -> str:
    """A SQL string literal for trusted, validated text (passwords we generate)."""
    return "'" + value.replace("\\", "\\\\").replace("'", "''") + "'"


# --- process and port checks ----------------------------------------------------------------


def port_in_use(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.settimeout(0.5)
        return probe.connect_ex((BIND, port)) == 0


def read_pid(instance: Instance) -> int | None:
    try:
        return int(instance.pid_file.read_text().strip())
    except (OSError, ValueError):
        return None


def pid_is_ours(instance: Instance, pid: int) -> bool:
    """The process exists and was started with our my.cnf (guards against pid reuse)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return f"--defaults-file={instance.config}".encode() in cmdline


def running_pid(instance: Instance) -> int | None:
    pid = read_pid(instance)
    return pid if pid is not None and pid_is_ours(instance, pid) else None


def admin_sql(instance: Instance, sql: str, *, database: str | None = None) -> str:
    """Runs SQL as the admin through the unix socket; SQL travels on stdin, never argv."""
    command = [
        client_binary(),
        "--no-defaults",
        f"--socket={instance.socket}",
        f"--user={instance.admin_user()}",
        "--protocol=socket",
        "--batch",
        "--skip-column-names",
        "--default-character-set=utf8mb4",
        "--connect-timeout=5",
    ]
    if database:
        command.append(database)
    result = subprocess.run(command, input=sql, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise AdminError(f"admin SQL failed: {result.stderr.strip()}")
    return result.stdout


def server_datadir(instance: Instance) -> Path | None:
    try:
        out = admin_sql(instance, "SELECT @@datadir;").strip()
    except AdminError:
        return None
    return Path(out).resolve() if out else None


def assert_port_is_ours_or_free(instance: Instance, port: int) -> bool:
    """True if our server already answers on the port, False if the port is free;
    refuses a port held by anyone else."""
    if not port_in_use(port):
        return False
    pid = running_pid(instance)
    datadir = server_datadir(instance) if pid is not None else None
    if pid is not None and datadir == instance.datadir.resolve():
        return True
    raise AdminError(
        f"port {port} on {BIND} is in use by a server whose datadir is not {instance.datadir}; "
        "refusing to administer it (choose another --port or stop that server)"
    )


# --- commands -------------------------------------------------------------------------------


def start(instance: Instance) -> None:
    if not instance.initialized:
        raise AdminError(f"{instance.directory} is not initialized; run `init` first")
    port = instance.port
    if assert_port_is_ours_or_free(instance, port):
        print(f"already running (pid {running_pid(instance)}, port {port})")
        return
    if running_pid(instance) is not None:
        raise AdminError("our server process exists but does not answer on its port; run `stop`")
    instance.pid_file.unlink(missing_ok=True)
    log = instance.log.open("ab")
    try:
        process = subprocess.Popen(
            [server_binary(), f"--defaults-file={instance.config}"],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
            close_fds=True,
        )
    finally:
        log.close()
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AdminError(f"server exited with {process.returncode}; see {instance.log}")
        if instance.socket.exists() and server_datadir(instance) is not None:
            print(f"started (pid {process.pid}, {BIND}:{port}, socket {instance.socket})")
            return
        time.sleep(0.1)
    process.terminate()
    raise AdminError(f"server did not become ready in {START_TIMEOUT_S:.0f}s; see {instance.log}")


def stop(instance: Instance) -> None:
    pid = read_pid(instance)
    if pid is None or not pid_is_ours(instance, pid):
        instance.pid_file.unlink(missing_ok=True)
        print("not running")
        return
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT_S
    while time.monotonic() < deadline:
        if not pid_is_ours(instance, pid):
            print(f"stopped (pid {pid})")
            return
        time.sleep(0.1)
    raise AdminError(
        f"server (pid {pid}) did not stop in {STOP_TIMEOUT_S:.0f}s; see {instance.log}"
    )


def status(instance: Instance) -> dict[str, object]:
    if not instance.initialized:
        return {"initialized": False, "running": False, "directory": str(instance.directory)}
    pid = running_pid(instance)
    info: dict[str, object] = {
        "initialized": True,
        "running": pid is not None,
        "pid": pid,
        "directory": str(instance.directory),
        "port": instance.port,
        "bind": BIND,
        "databases": instance.state().get("databases"),
        "password_file": str(instance.password_file),
    }
    if pid is not None:
        row = admin_sql(instance, "SELECT @@datadir, @@read_only, @@port, VERSION();").split("\t")
        info.update(
            datadir=row[0], read_only=row[1] == "1", server_port=int(row[2]), version=row[3].strip()
        )
    return info


def reader_password(instance: Instance) -> str:
    if instance.password_file.is_file():
        return instance.password_file.read_text().strip()
    password = secrets.token_urlsafe(24)
    fd = os.open(instance.password_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(password)
    return password


def grant_reader(instance: Instance, databases: list[str]) -> None:
    password = _quote(reader_password(instance))
    statements = ["SET GLOBAL read_only = OFF;"]
    for host in READER_HOSTS:
        account = f"'{READER}'@'{host}'"
        statements += [
            f"CREATE USER IF NOT EXISTS {account} IDENTIFIED BY {password};",
            f"ALTER USER {account} IDENTIFIED BY {password};",
            f"REVOKE ALL PRIVILEGES, GRANT OPTION FROM {account};",
        ]
        statements += [f"GRANT SELECT ON `{db}`.* TO {account};" for db in databases]
    try:
        admin_sql(instance, "\n".join(statements))
    finally:
        admin_sql(instance, "SET GLOBAL read_only = ON;")


def init(instance: Instance, port: int, databases: list[str]) -> None:
    if instance.initialized:
        stored = instance.port
        if stored != port:
            raise AdminError(
                f"{instance.directory} is already initialized for port {stored}, not {port}"
            )
    else:
        if instance.datadir.exists() and any(instance.datadir.iterdir()):
            raise AdminError(f"{instance.datadir} exists but holds no initialized datadir")
        if port_in_use(port):
            raise AdminError(f"port {port} on {BIND} is already in use; choose another --port")
        instance.directory.mkdir(parents=True, exist_ok=True)
        os.chmod(instance.directory, 0o700)
        instance.datadir.mkdir(exist_ok=True)
        instance.write_config(port)
        command = [
            install_db_binary(),
            f"--defaults-file={instance.config}",
            f"--datadir={instance.datadir}",
            f"--user={instance.admin_user()}",
            "--auth-root-authentication-method=socket",
            "--skip-test-db",
        ]
        with instance.log.open("ab") as log:
            result = subprocess.run(command, stdout=log, stderr=log, check=False)
        if result.returncode != 0:
            raise AdminError(f"{command[0]} failed with {result.returncode}; see {instance.log}")
    instance.state_file.write_text(
        json.dumps({"port": port, "bind": BIND, "databases": databases}, indent=2) + "\n"
    )
    start(instance)
    grant_reader(instance, databases)
    granted = ", ".join(databases)
    print(f"reader {READER} can SELECT on {granted}; password in {instance.password_file}")


def restore(instance: Instance, dump: Path) -> None:
    if running_pid(instance) is None:
        raise AdminError("server is not running; run `start` first")
    assert_port_is_ours_or_free(instance, instance.port)
    if not dump.is_file():
        raise AdminError(f"dump not found: {dump}")
    admin_sql(instance, "SET GLOBAL read_only = OFF;")
    try:
        command = [
            client_binary(),
            "--no-defaults",
            f"--socket={instance.socket}",
            f"--user={instance.admin_user()}",
            "--protocol=socket",
            "--default-character-set=utf8mb4",
            "--batch",
        ]
        with dump.open("rb") as source:
            result = subprocess.run(command, stdin=source, capture_output=True, check=False)
        if result.returncode != 0:
            raise AdminError(f"restore failed: {result.stderr.decode(errors='replace').strip()}")
    finally:
        admin_sql(instance, "SET GLOBAL read_only = ON;")
    print(f"restored {dump}")


# --- command line ---------------------------------------------------------------------------


def _database(value: str) -> str:
    if not IDENTIFIER.fullmatch(value):
        raise argparse.ArgumentTypeError(f"not a plain database name: {value!r}")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["init", "start", "stop", "status", "restore"])
    parser.add_argument("--directory", type=Path, default=DEFAULT_DIRECTORY)
    parser.add_argument("--port", type=int, default=None, help=f"default {DEFAULT_PORT}")
    parser.add_argument("--bind", default=BIND, choices=[BIND], help="only 127.0.0.1")
    parser.add_argument(
        "--database",
        dest="databases",
        action="append",
        type=_database,
        help="database the reader may SELECT from (repeatable; default cata_world)",
    )
    parser.add_argument("--dump", type=Path, help="SQL dump for `restore`")
    args = parser.parse_args(argv)
    instance = Instance(args.directory)
    try:
        if (
            args.port is not None
            and args.command != "init"
            and instance.initialized
            and args.port != instance.port
        ):
            raise AdminError(f"{instance.directory} is configured for port {instance.port}")
        if args.command == "init":
            # Re-running init keeps the stored port and grants unless told otherwise.
            port, databases = DEFAULT_PORT, list(DEFAULT_DATABASES)
            if instance.initialized:
                port = instance.port
                stored = instance.state().get("databases")
                if isinstance(stored, list) and stored:
                    databases = [str(db) for db in stored]
            init(instance, args.port or port, args.databases or databases)
        elif args.command == "start":
            start(instance)
        elif args.command == "stop":
            stop(instance)
        elif args.command == "status":
            print(json.dumps(status(instance), indent=2))
        else:
            if args.dump is None:
                parser.error("restore needs --dump FILE")
            restore(instance, args.dump)
    except AdminError as err:
        print(f"dev_world_db: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
