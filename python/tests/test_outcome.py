# SPDX-License-Identifier: BSD-3-Clause
"""How a finished step is judged: a result only with exit code 0 and a
complete record; otherwise failed, with the exit code and the last
`iokernels: error:` line. A run past its timeout is killed."""

import json
import os
import signal
import subprocess
import sys
import time

from conftest import BIN, PYDIR, cli, env
from declared import missing
from iokernels_campaign.run import outcome

MPI_NOISE = """iokernels: error: first problem
--------------------------------------------------------------------------
Primary job  terminated normally, but 1 process returned
a non-zero exit code. Per user-direction, the job has been aborted.
--------------------------------------------------------------------------
iokernels: error: cannot create ./btio.nc: No space left on device (ncmpi_create)
--------------------------------------------------------------------------
mpiexec detected that one or more processes exited with non-zero status
--------------------------------------------------------------------------
"""


def step(tmp_path, rc, stderr="", record=None):
    f = outcome.files(tmp_path, "write")
    f["stderr"].write_text(stderr)
    if record is not None:
        f["jsonl"].write_text(json.dumps(record) + "\n")
    outcome.write_status(tmp_path, "write", rc, 100.0, 102.5)
    return outcome.read(tmp_path, "write")


def test_failed_run_keeps_exit_code_and_last_error_line(tmp_path):
    o = step(tmp_path, 1, MPI_NOISE)
    assert (o.status, o.exit_code) == ("failed", 1)
    assert (
        o.error == "iokernels: error: cannot create ./btio.nc: No space left on device "
        "(ncmpi_create)"
    )
    assert o.elapsed == 2.5


def test_failed_run_without_error_line(tmp_path):
    assert step(tmp_path, 139, "Segmentation fault\n").error == "Segmentation fault"
    assert step(tmp_path, 9).error == "exit code 9 and nothing on stderr"


def test_exit_0_without_record_is_a_failure(tmp_path):
    o = step(tmp_path, 0)
    assert o.status == "failed" and o.error == "exit code 0 but no JSON record in write.jsonl"


def test_record_of_a_failed_verification_is_not_a_result(tmp_path):
    o = step(
        tmp_path,
        3,
        "iokernels: error: verify failed: 1 of 10 values differ\n",
        {"schema_version": 2, "exit_code": 3},
    )
    assert (o.status, o.exit_code) == ("failed", 3)
    assert o.error.startswith("iokernels: error: verify failed")


def test_record_of_another_schema_is_refused(tmp_path):
    o = step(tmp_path, 0, "", {"schema_version": 1, "exit_code": 0})
    assert o.status == "failed"
    assert o.error == "JSON record schema_version 1: this campaign tool reads 2"


def test_no_status_file_means_not_run(tmp_path):
    o = outcome.read(tmp_path, "read")
    assert (o.status, o.exit_code) == ("failed", None) and o.error.startswith("not run:")


TIMEOUT = """
[campaign]
name = "slow"
timeout = 1.5  # this run takes about 30 s (data generation; null writes nothing)
[[kernel]]
name = "btio"
backends = ["null"]
ranks = [4]
options = { grid = "160,160,160", dumps = 400 }
"""


def left_running(directory):
    """Processes of the binary whose working directory is `directory`."""
    left = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmd = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            continue
        if str(BIN).encode() in cmd and cwd == str(directory):
            left.append(pid)
    return left


def test_timeout_kills_the_run_and_stores_it_failed(tmp_path):
    (tmp_path / "c.toml").write_text(TIMEOUT)
    p = cli("run", "c.toml", "--db", "s.sqlite", "--out", "out", "--no-report", cwd=tmp_path)
    assert p.returncode == 1, p.stderr
    assert "FAILED: killed: still running after its timeout of 1.5 s" in p.stdout
    status = next((tmp_path / "out").glob("runs/*/*/iter1/write.status.json"))
    assert json.loads(status.read_text())["timed_out"] == 1.5
    assert left_running(status.parent) == []


def test_interrupt_ends_the_running_case(tmp_path):
    # the run lasts far longer than the 1.5 s before the interrupt, which
    # must land while the case runs (20 dumps, 1.8 s here, could end first)
    (tmp_path / "c.toml").write_text(TIMEOUT.replace("timeout = 1.5", "timeout = 120"))
    cmd = [
        sys.executable,
        "-m",
        "iokernels_campaign",
        "run",
        "c.toml",
        "--db",
        "s.sqlite",
        "--out",
        "out",
        "--no-report",
    ]
    proc = subprocess.Popen(
        cmd, cwd=tmp_path, env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 60
    while not list((tmp_path / "out").glob("runs/*/*/iter1/write.stdout")):
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.1)
    time.sleep(1.5)  # the ranks are generating data
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "interrupted" in err
    d = next((tmp_path / "out").glob("runs/*/*/iter1"))
    assert left_running(d) == []


def without(program, farm):
    """PATH of one folder of links to every program on PATH but `program`:
    where srun is in /usr/bin, dropping that folder would also drop ssh and
    the rest that OpenMPI needs."""
    farm.mkdir()
    for d in os.environ["PATH"].split(os.pathsep):
        if not os.path.isdir(d):
            continue
        for name in os.listdir(d):
            path, link = os.path.join(d, name), farm / name
            if name != program and not link.exists() and os.access(path, os.X_OK):
                link.symlink_to(path)
    return str(farm)


def test_missing_launcher_is_an_error_before_anything_runs(tmp_path):
    (tmp_path / "c.toml").write_text(TIMEOUT)
    p = cli(
        "run",
        "c.toml",
        "--launcher",
        "srun",
        "--db",
        "s.sqlite",
        "--out",
        "out",
        cwd=tmp_path,
        extra_env={"PATH": without("srun", tmp_path / "bin")},
    )
    assert p.returncode == 2
    assert p.stderr.strip() == (
        "iokernels-campaign: error: srun not found on PATH: is this the right machine (--launcher)?"
    )
    assert not (tmp_path / "out").exists() and not (tmp_path / "s.sqlite").exists()


def test_console_script_in_the_project_venv():
    venv = PYDIR.parent / ".venv"
    if os.path.realpath(sys.prefix) != os.path.realpath(venv):
        missing("venv", "not running from the project's .venv (make venv installs the script)")
    script = venv / "bin" / "iokernels-campaign"
    p = subprocess.run([str(script), "--help"], capture_output=True, text=True)
    assert p.returncode == 0 and "run" in p.stdout and "compare" in p.stdout
