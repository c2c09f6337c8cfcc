# SPDX-License-Identifier: BSD-3-Clause
"""The results store: one SQLite file (WAL mode), written one transaction per
run so that several campaigns can write the same file at once.

Tables: campaigns (one row per `run` invocation), runs (one row per run of
one case step and iteration, keyed by campaign, case hash and iteration:
the record's figures as columns plus the whole record), passes and phases
(the record's per-pass and per-phase figures). Bandwidths are bytes/s,
times seconds. Cached reads are named: runs.read_from_storage (1 every read
pass came from storage, 0 some came from the page cache, NULL no read) and
passes.from_storage with its reason. Around each run: the variables
exported to it (runs.env, JSON, secrets redacted), its case directory's
striping (lustre_*), where it ran (host, hostnames, nodes, ranks_per_node)
and its Slurm job and step (slurm_job_id, slurm_step_id; a run that never
started keeps the job id of its batch job). A failed run has status
'failed', its exit code and error line, and no figures."""

import functools
import json
import os
import sqlite3
import time
import urllib.parse
from pathlib import Path

from ..base import interrupt, limits
from ..base.paths import show
from .record import (
    OVERLAP_COLUMNS,
    PASS_COLUMNS,
    PHASE_COLUMNS,
    RUN_COLUMNS,
    ceiling_above,
    ceiling_margin,
    from_storage_fraction,
    mpiio_layer,
    oversubscribed,
    oversubscribed_text,
    parsed,
    pass_rows,
    run_columns,
    what_ran,
)

STORE_VERSION = 6  # 2: JSON record schema 2, read_from_storage; 3: env, lustre, Slurm ids;
# 4: the order of the runs (runs.round, runs.position; campaigns.run_order, seed, joint);
# 5: runs.case_index (the case's place in its campaign file);
# 6: the computation and the overlap (record.OVERLAP_COLUMNS: compute_seconds, async_write,
# exposed I/O, overlap with its interval, call and where)
EARLIER_VERSIONS = ("2", "3", "4", "5")  # versions 3 to 6 only added columns
# columns store version 3 added to runs: a version 2 store gains them on open
EXTRA_COLUMNS = {
    "env": "TEXT",  # JSON object: the variables exported to the run (secrets redacted)
    "lustre_stripe_count": "INTEGER",
    "lustre_stripe_size_bytes": "INTEGER",
    "lustre_status": "TEXT",  # applied, skipped (no lfs), failed; NULL: no lustre table
    "lustre_message": "TEXT",
    "ranks_per_node": "INTEGER",
    "hostnames": "TEXT",  # JSON list of the nodes, in rank order
    "slurm_job_id": "INTEGER",
    "slurm_step_id": "INTEGER",
    "round": "INTEGER",  # the round of an interleaved session (blocked: the iteration)
    "position": "INTEGER",  # the run's place in its session's order, 1 first
    # the case's place in the campaign as written, 1 first: reports list
    # kernels in the file's order, not in the order an interleaved session ran them
    "case_index": "INTEGER",
    **OVERLAP_COLUMNS,
}
# columns store version 4 added to campaigns (NULL in a store from before: blocked)
CAMPAIGN_COLUMNS = {
    "run_order": "TEXT",  # interleaved or blocked (run/order.py)
    "seed": "INTEGER",  # the seed of the interleaved order
    "joint": "TEXT",  # run A.toml B.toml --interleave: the id shared by the campaigns run together
}
BUSY_TIMEOUT_S = 120

_RUN_KEYS = (
    "campaign_id case_hash iteration kernel label backend ranks variant mode argv case_dir "
    "status exit_code error started elapsed"
).split()

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS campaigns (
    id TEXT PRIMARY KEY, name TEXT NOT NULL, path TEXT, description TEXT, launcher TEXT,
    binary TEXT, out_dir TEXT, host TEXT, started TEXT, finished TEXT,
    {", ".join(f"{c} {t}" for c, t in CAMPAIGN_COLUMNS.items())});
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    campaign_id TEXT NOT NULL REFERENCES campaigns(id),
    case_hash TEXT NOT NULL, iteration INTEGER NOT NULL,
    kernel TEXT NOT NULL, label TEXT, backend TEXT NOT NULL, ranks INTEGER NOT NULL,
    variant TEXT, mode TEXT NOT NULL, argv TEXT, case_dir TEXT,
    status TEXT NOT NULL CHECK (status IN ('ok', 'failed')), exit_code INTEGER, error TEXT,
    started REAL, elapsed REAL,
    {", ".join(f"{c}" for c in RUN_COLUMNS)},
    {", ".join(f"{c} {t}" for c, t in EXTRA_COLUMNS.items() if c not in RUN_COLUMNS)},
    record TEXT,
    UNIQUE (campaign_id, case_hash, iteration));
CREATE TABLE IF NOT EXISTS passes (
    run_id INTEGER NOT NULL REFERENCES runs(id), {", ".join(PASS_COLUMNS)},
    PRIMARY KEY (run_id, idx));
CREATE TABLE IF NOT EXISTS phases (
    run_id INTEGER NOT NULL REFERENCES runs(id), {", ".join(PHASE_COLUMNS)},
    PRIMARY KEY (run_id, pass_idx, phase));
CREATE INDEX IF NOT EXISTS runs_case ON runs (case_hash);
CREATE TABLE IF NOT EXISTS mix_runs (
    run_id INTEGER NOT NULL REFERENCES runs(id), member INTEGER NOT NULL, label TEXT,
    kernel TEXT NOT NULL, backend TEXT, ranks INTEGER, start_seconds REAL,
    iteration INTEGER NOT NULL, mode TEXT NOT NULL CHECK (mode IN ('alone', 'together')),
    seconds REAL NOT NULL, record TEXT,
    PRIMARY KEY (run_id, member, iteration, mode));
CREATE TABLE IF NOT EXISTS tunes (
    campaign_id TEXT PRIMARY KEY REFERENCES campaigns(id), answer TEXT NOT NULL);
"""


class StoreError(Exception):
    """A file that is not a results store of this version, or that SQLite
    refuses: one line naming the file."""


STORE_TABLES = ("meta", "campaigns", "runs", "passes", "phases")  # mix_runs: created on open


def mix_rows(case, record):
    """The rows of mix_runs for a stored mix (whatever its status: the runs
    a failed mix completed are kept): one per member, iteration and mode."""
    rows = []
    for i, m in enumerate((record or {}).get("members", [])):
        member = case.members[i] if i < len(case.members) else None
        for run in m.get("runs", []):
            rows.append(
                {
                    "member": m["index"],
                    "label": case.member_label(i) if member else m["kernel"],
                    "kernel": m["kernel"],
                    "backend": member.backend if member else None,
                    "ranks": m["nprocs"],
                    "start_seconds": m["start_seconds"],
                    "iteration": run["iteration"],
                    "mode": run["mode"],
                    "seconds": run["seconds"],
                    "record": json.dumps(run["record"]) if "record" in run else None,
                }
            )
    return rows


def sqlite_message(path, e):
    """One line for a SQLite error on the store at path, naming the file."""
    text = str(e)
    low = text.lower()
    p = show(path)
    if "file is not a database" in low:
        return f"{p} is not a SQLite database"
    if "malformed" in low or "corrupt" in low:
        return f"{p} is truncated or corrupt (sqlite: {text})"
    if "readonly" in low or "read-only" in low:
        return f"{p} is read-only (sqlite: {text})"
    if "no such table" in low or "no such column" in low:
        return f"{p} is not an iokernels results store (sqlite: {text})"
    if "locked" in low or "busy" in low:
        return f"{p} is locked by another process (sqlite: {text})"
    if "unable to open" in low:
        return f"cannot open {p} (sqlite: {text})"
    if "disk i/o error" in low and limits.file_size() is not None:  # EFBIG, SIGXFSZ ignored
        if getattr(e, "sqlite_errorname", "") == "SQLITE_IOERR_SHMSIZE":
            written = f"{p}-shm (32 KiB), which it writes beside a store even to read it"
        else:
            written = f"{p} or {p}-wal"
        return (
            f"SQLite could not write {written} (sqlite: {text}): the file size limit of "
            f"{limits.file_size() // 1024} KiB (ulimit -f) stops it; raise it (ulimit -f unlimited)"
        )
    return f"{p}: sqlite: {text}"


def _columns(db):
    """{table: set of column names} of the store's tables in db."""
    return {t: {r[1] for r in db.execute(f"PRAGMA table_info({t})")} for t in STORE_TABLES}


def _expected_columns():
    db = sqlite3.connect(":memory:")
    db.executescript(_SCHEMA)
    cols = _columns(db)
    db.close()
    cols["runs"] -= set(EXTRA_COLUMNS)  # a version 2 store read as it is lacks them
    cols["campaigns"] -= set(CAMPAIGN_COLUMNS)  # and a version 3 store these
    return cols


def _json_is(text, kind):
    try:
        return isinstance(json.loads(text), kind)
    except (ValueError, TypeError):
        return False


def _named(method):
    """SQLite errors of a store method become a StoreError naming the file."""

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except sqlite3.Error as e:
            raise StoreError(sqlite_message(self.path, e)) from None
        except UnicodeDecodeError:  # SQLite's message quotes damaged schema text
            raise StoreError(
                f"{show(self.path)} is truncated or corrupt (its schema text is damaged)"
            ) from None

    return wrapper


class Store:
    """create: make the file when missing; readonly: open it read-only
    (mode=ro: never created nor changed; on a read-only folder, where SQLite
    cannot make the WAL's shared-memory file, as immutable)."""

    def __init__(self, path, create=True, readonly=False):
        self.path = Path(path)
        if (readonly or not create) and not self.path.exists():
            raise StoreError(f"no results store at {show(self.path)}")
        self.readonly = readonly
        self.db = None
        # a read may make PATH-wal and PATH-shm: removed at close when it did
        self._left_wal = readonly and not os.path.exists(f"{self.path}-wal")
        try:
            self._open()
        except BaseException:
            self.close()
            raise

    @_named
    def _open(self):
        if self.readonly:
            self.db = self._connect_ro()
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        self.db.row_factory = sqlite3.Row
        # text that is not UTF-8 (a damaged page) is read with U+FFFD, not refused
        self.db.text_factory = lambda b: b.decode("utf-8", "replace")
        self.db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_S * 1000}")
        tables = {r[0] for r in self.db.execute("SELECT name FROM sqlite_master")}
        if tables and "meta" not in tables:
            raise StoreError(
                f"{show(self.path)} is a SQLite database but not an iokernels results store "
                f"(no table meta; it has {', '.join(sorted(tables)[:4])})"
            )
        if self.readonly:
            missing = [t for t in STORE_TABLES if t not in tables]
            if missing:
                raise StoreError(
                    f"{show(self.path)} is not an iokernels results store (no table {missing[0]})"
                )
            got = self.db.execute("SELECT value FROM meta WHERE key='store_version'").fetchone()
            if got is None or got[0] not in (*EARLIER_VERSIONS, str(STORE_VERSION)):
                raise StoreError(
                    f"{show(self.path)}: store version {got[0] if got else 'missing'}, "
                    f"this tool reads {STORE_VERSION}"
                )
            self._check_columns()
            return
        mode = self._wal()
        if mode != "wal":
            raise StoreError(f"{show(self.path)}: cannot switch to WAL mode (got {mode})")
        self.db.execute("PRAGMA foreign_keys = ON")
        with self.transaction():
            for stmt in _SCHEMA.split(";"):
                if stmt.strip():
                    self.db.execute(stmt)
            self.db.execute(
                "INSERT OR IGNORE INTO meta VALUES ('store_version', ?)", (str(STORE_VERSION),)
            )
            got = self.db.execute("SELECT value FROM meta WHERE key='store_version'").fetchone()
            if got[0] in EARLIER_VERSIONS:
                for table, added in (("runs", EXTRA_COLUMNS), ("campaigns", CAMPAIGN_COLUMNS)):
                    have = {r[1] for r in self.db.execute(f"PRAGMA table_info({table})")}
                    for col, kind in added.items():
                        if col not in have:
                            self.db.execute(f"ALTER TABLE {table} ADD COLUMN {col} {kind}")
                self.db.execute(
                    "UPDATE meta SET value = ? WHERE key = 'store_version'", (str(STORE_VERSION),)
                )
                got = (str(STORE_VERSION),)
        if got[0] != str(STORE_VERSION):
            raise StoreError(
                f"{show(self.path)}: store version {got[0]}, this tool reads {STORE_VERSION}"
            )
        self._check_columns()

    def _check_columns(self):
        have = _columns(self.db)
        for table, want in _expected_columns().items():
            missing = sorted(want - have[table])
            if missing:
                raise StoreError(
                    f"{show(self.path)} is not an iokernels results store of version "
                    f"{STORE_VERSION} (table {table} has no column {missing[0]})"
                )

    def _connect_ro(self):
        uri = "file:" + urllib.parse.quote(str(self.path.absolute())) + "?mode=ro"
        db = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        try:
            db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
            return db
        except (sqlite3.Error, UnicodeDecodeError) as e:
            db.close()
            folder = self.path.absolute().parent
            if "unable to open" not in str(e) or os.access(folder, os.W_OK):
                raise
        # a WAL store in a read-only folder: nobody can be writing it
        return sqlite3.connect(uri + "&immutable=1", uri=True, isolation_level=None)

    def _wal(self):
        """Switches to WAL. A new store opened by two processes at once: the
        switch needs the file to itself and SQLite does not wait for it
        (busy_timeout does not apply), so retry for as long as it would."""
        deadline = time.monotonic() + BUSY_TIMEOUT_S
        while True:
            try:
                return self.db.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            except sqlite3.OperationalError as e:
                if "locked" not in str(e) or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def close(self):
        if self.db is not None:
            self.db.close()
            self.db = None
            if self.readonly and self._left_wal:
                self._remove_wal()

    def _remove_wal(self):
        """A read-only connection makes PATH-wal and PATH-shm when they are
        missing and cannot remove them; SQLite removes them when the last
        connection that may write closes. So one is opened and closed here,
        never changing the store: another process still reading or writing
        keeps them (SQLite knows), none left behind by a read."""
        if not any(os.path.exists(f"{self.path}-{x}") for x in ("wal", "shm")):
            return
        try:
            db = sqlite3.connect(self.path, timeout=0)
            try:
                db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
            finally:
                db.close()
        except (sqlite3.Error, UnicodeDecodeError):  # a damaged store: said when it was read
            pass

    def transaction(self):
        return _Transaction(self.db)

    @_named
    def begin_campaign(
        self,
        cid,
        campaign,
        launcher,
        binary,
        out_dir,
        host,
        started,
        order=None,
        seed=None,
        joint=None,
    ):
        """order, seed: the session's order of runs (run/order.py); joint:
        the id shared by campaigns run together (run --interleave)."""
        with self.transaction():
            self.db.execute(
                "INSERT INTO campaigns (id, name, path, description, launcher, binary, out_dir, "
                "host, started, run_order, seed, joint) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    cid,
                    campaign.name,
                    str(campaign.path),
                    campaign.description,
                    launcher,
                    str(binary),
                    str(out_dir),
                    host,
                    started,
                    order,
                    seed,
                    joint,
                ),
            )

    @_named
    def finish_campaign(self, cid, finished):
        with self.transaction():
            self.db.execute("UPDATE campaigns SET finished = ? WHERE id = ?", (finished, cid))

    @_named
    def add_run(self, cid, case, mode, iteration, outcome, extra=None):
        """Stores one run in one transaction; figures only when it succeeded.
        extra: columns of EXTRA_COLUMNS known around the run (its env, the
        striping, the batch job id), the record's own values winning."""
        row = {
            "campaign_id": cid,
            "case_hash": case.case_hash(mode),
            "iteration": iteration,
            "kernel": case.kernel,
            "label": case.label,
            "backend": case.backend,
            "ranks": case.ranks,
            "variant": case.variant,
            "mode": mode,
            "argv": json.dumps(case.argv(mode)),
            "case_dir": str(outcome.directory),
            "status": outcome.status,
            "exit_code": outcome.exit_code,
            "error": outcome.error,
            "started": outcome.started,
            "elapsed": outcome.elapsed,
        }
        figures, passes, phases = {}, [], []
        mix = case.kernel == "mix"  # one run; its members' runs in mix_runs
        if outcome.status == "ok" and not mix:
            figures = run_columns(outcome.record)
            passes, phases = pass_rows(outcome.record)
        row.update({k: v for k, v in (extra or {}).items() if k in EXTRA_COLUMNS})
        row.update({k: v for k, v in figures.items() if v is not None or k not in row})
        row["record"] = json.dumps(outcome.record) if outcome.record is not None else None
        cols = list(row)
        with self.transaction():
            cur = self.db.execute(
                f"INSERT INTO runs ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                [row[c] for c in cols],
            )
            run_id = cur.lastrowid
            for p in passes:
                self._insert("passes", {"run_id": run_id, **p})
            for ph in phases:
                self._insert("phases", {"run_id": run_id, **ph})
            for m in mix_rows(case, outcome.record) if mix else ():
                self._insert("mix_runs", {"run_id": run_id, **m})
        return run_id

    def _rows_of(self, select, ids):
        """The rows of `select` (its IN list as {}) for ids, 500 at a time."""
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            yield from self.db.execute(select.format(", ".join("?" * len(chunk))), chunk)

    @_named
    def mix_runs(self, run_ids):
        """{run id: [member run rows]} of stored mixes (mixcase.py)."""
        out = {}
        ids = list(run_ids)
        if not self.db.execute("SELECT 1 FROM sqlite_master WHERE name = 'mix_runs'").fetchone():
            return out  # a store read-only from before mixes
        select = (
            "SELECT run_id, member, label, kernel, backend, ranks, start_seconds, iteration, "
            "mode, seconds FROM mix_runs WHERE run_id IN ({}) ORDER BY run_id, member, iteration, "
            "mode"
        )
        for r in self._rows_of(select, ids):
            out.setdefault(r["run_id"], []).append(dict(r))
        return out

    def _insert(self, table, row):
        cols = list(row)
        self.db.execute(
            f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
            [row[c] for c in cols],
        )

    @_named
    def campaigns(self):
        out = [dict(r) for r in self.db.execute("SELECT * FROM campaigns ORDER BY started, id")]
        for d in out:  # a version 3 store opened read-only
            for col in CAMPAIGN_COLUMNS:
                d.setdefault(col, None)
        return out

    @_named
    def runs(self, campaign=None, kernel=None, backend=None, status=None):
        """Runs as dicts (without the whole record, but with the MPI-IO layer
        it names as `mpiio`), oldest first. `campaign` matches a campaign's
        id or name."""
        where, args = [], []
        if campaign:
            where.append("(r.campaign_id = ? OR c.name = ?)")
            args += [campaign, campaign]
        for col, val in (("kernel", kernel), ("backend", backend), ("status", status)):
            if val:
                where.append(f"r.{col} = ?")
                args.append(val)
        sql = (
            f"SELECT r.*, c.name AS campaign{self._order_columns()} FROM runs r "
            "JOIN campaigns c ON c.id = r.campaign_id"
            + (" WHERE " + " AND ".join(where) if where else "")
            + " ORDER BY r.id"
        )
        out = []
        for r in self.db.execute(sql, args):
            d = dict(r)
            rec = parsed(d.pop("record"))  # once, for the four readers below
            d["ceiling_above"] = ceiling_above(rec)
            d["read_ceiling_above"] = ceiling_above(rec, ("read",))
            d["ceiling_margin"] = ceiling_margin(rec)  # None: a record before the field
            d["from_storage_fraction"] = from_storage_fraction(rec)
            over = oversubscribed(rec)
            d["oversubscribed"] = oversubscribed_text(*over) if over else None
            d["ran"] = what_ran(rec)
            d["mpiio"] = mpiio_layer(rec)
            for col in (*EXTRA_COLUMNS, *CAMPAIGN_COLUMNS):  # older stores opened read-only
                d.setdefault(col, None)
            for col, kind in (("env", dict), ("hostnames", list)):
                if d[col] is not None and not _json_is(d[col], kind):
                    raise StoreError(
                        f"{show(self.path)} is corrupt: run {d['id']} has a damaged {col} "
                        f"(not a JSON {kind.__name__})"
                    )
            out.append(d)
        return out

    def _order_columns(self):
        """The campaign's order columns a run carries (a store of version 3
        opened read-only has none: NULL, blocked)."""
        have = {r[1] for r in self.db.execute("PRAGMA table_info(campaigns)")}
        return "".join(f", c.{c}" for c in CAMPAIGN_COLUMNS if c in have)

    @_named
    def phases(self, run_ids):
        """{run id: {phase: (job time summed over the run's passes, is I/O)}},
        phases in the order the record lists them."""
        out = {}
        ids = list(run_ids)
        select = (
            "SELECT run_id, phase, SUM(job) AS job, MAX(io) AS io, MIN(rowid) AS o "
            "FROM phases WHERE run_id IN ({}) GROUP BY run_id, phase ORDER BY run_id, o"
        )
        for r in self._rows_of(select, ids):
            out.setdefault(r["run_id"], {})[r["phase"]] = (r["job"], bool(r["io"]))
        return out

    @_named
    def _rows(self, table, run_ids, order):
        out, ids = [], list(run_ids)
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            sql = (
                f"SELECT * FROM {table} WHERE run_id IN ({', '.join('?' * len(chunk))}) "
                f"ORDER BY {order}"
            )
            out += [dict(r) for r in self.db.execute(sql, chunk)]
        return out

    def passes(self, run_ids):
        """The passes of these runs as dicts (store units: bytes/s, seconds)."""
        return self._rows("passes", run_ids, "run_id, idx")

    def phase_rows(self, run_ids):
        """The phases of these runs, one dict per pass and phase."""
        return self._rows("phases", run_ids, "run_id, pass_idx, rowid")

    @_named
    def add_tune(self, cid, answer):
        """Keeps a tune's answer (tune_answer.build: a JSON object) with its campaign."""
        with self.transaction():
            self.db.execute("INSERT OR REPLACE INTO tunes VALUES (?, ?)", (cid, json.dumps(answer)))

    @_named
    def tunes(self, campaign=None):
        """The answers of the tunes in the store (of one campaign: id or name),
        oldest first; none in a store from before the tunes table."""
        have = self.db.execute("SELECT 1 FROM sqlite_master WHERE name = 'tunes'").fetchone()
        if not have:
            return []
        sql = (
            "SELECT t.answer FROM tunes t JOIN campaigns c ON c.id = t.campaign_id"
            + (" WHERE c.id = ? OR c.name = ?" if campaign else "")
            + " ORDER BY c.started, c.id"
        )
        out = []
        for (text,) in self.db.execute(sql, (campaign, campaign) if campaign else ()):
            try:
                out.append(json.loads(text))
            except ValueError:
                raise StoreError(
                    f"{show(self.path)} is corrupt: a tune's answer is not JSON"
                ) from None
        return out

    @_named
    def record(self, run_id):
        row = self.db.execute("SELECT record FROM runs WHERE id = ?", (run_id,)).fetchone()
        return json.loads(row[0]) if row and row[0] else None


class _Transaction:
    """BEGIN IMMEDIATE ... COMMIT (ROLLBACK on error): the write lock is taken
    at the start, so two writers wait for each other instead of failing."""

    def __init__(self, db):
        self.db = db
        self.held = interrupt.deferred()  # a signal waits for COMMIT or ROLLBACK

    def __enter__(self):
        self.held.__enter__()
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except BaseException:
            self.held.__exit__(None, None, None)
            raise
        return self.db

    def __exit__(self, exc_type, exc, tb):
        try:
            self.db.execute("ROLLBACK" if exc_type else "COMMIT")
        finally:
            self.held.__exit__(None, None, None)
        return False
