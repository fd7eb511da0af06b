"""A throw-away single-node SLURM cluster on loopback with four fake GPUs, for tests.

`slurm_cluster(directory)` installs the Debian packages when they are missing (root + apt),
starts munged, slurmctld and slurmd with all their state under `directory`, yields a
`SlurmCluster`, and stops only the daemons it started. `why_slurm_cannot_run()` says why a
machine cannot host it (tests skip with that reason).

Two machine-wide things are needed because the SLURM executor plugin drops SLURM_CONF before
its inner `srun`: /etc/slurm/slurm.conf becomes a symlink to our config while the cluster runs
(only when no real config is there), and a lock file keeps two test sessions from starting two
clusters at the same time.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

PACKAGES = ["slurmctld", "slurmd", "slurm-client", "munge"]
BINARIES = ["slurmctld", "slurmd", "sbatch", "squeue", "scontrol", "srun", "munged", "mungekey"]
SYSTEM_CONF = Path("/etc/slurm/slurm.conf")
SESSION_LOCK = Path(tempfile.gettempdir()) / "errorseq-slurm-cluster.lock"
DIR_PREFIX = "errorseq-slurm-"
PARTITION = "gpu"
# The node advertises more than the machine has (SlurmdParameters=config_overrides), so that two
# test workflows' 2-GPU training jobs run side by side; the GPUs are /dev/null (bookkeeping only).
FAKE_GPUS = 4
NODE_CPUS = 8


@dataclass
class LocalCluster:
    """What every throw-away cluster here has: its directory, its slurm.conf, the daemons it started."""

    root: Path
    conf: Path
    daemons: dict[str, subprocess.Popen] = field(default_factory=dict, kw_only=True)

    @property
    def env(self) -> dict[str, str]:
        return {**os.environ, "SLURM_CONF": str(self.conf)}

    def run(self, *command: str, check: bool = True, timeout: float = 60) -> str:
        done = subprocess.run(command, env=self.env, capture_output=True, text=True, timeout=timeout)
        if check and done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed: {done.stderr.strip()}")
        return done.stdout

    def log(self, daemon: str) -> str:
        path = self.root / "log" / f"{daemon}.log"
        return path.read_text(errors="replace") if path.exists() else ""


@dataclass
class SlurmCluster(LocalCluster):
    host: str


def missing_binaries() -> list[str]:
    return [name for name in BINARIES if not shutil.which(name, path=_sbin_path())]


def _sbin_path() -> str:
    return os.environ.get("PATH", "") + ":/usr/sbin:/sbin"


def why_slurm_cannot_run() -> str | None:
    """None when this machine can host the test cluster, else the reason it cannot."""
    if os.environ.get("ERRORSEQ_SKIP_SLURM"):
        return "ERRORSEQ_SKIP_SLURM is set"
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "the SLURM tests start slurmctld/slurmd/munged and need root"
    if missing_binaries() and not shutil.which("apt-get"):
        return f"SLURM is not installed ({', '.join(missing_binaries())} missing) and there is no apt-get"
    if SYSTEM_CONF.exists() and not _is_ours(SYSTEM_CONF):
        return f"{SYSTEM_CONF} exists (a real cluster?); the test cluster will not replace it"
    return None


def install_slurm_packages() -> None:
    if not missing_binaries():
        return
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-q"], check=True, env=env, capture_output=True)
    subprocess.run(
        ["apt-get", "install", "-y", "-q", "--no-install-recommends", *PACKAGES],
        check=True,
        env=env,
        capture_output=True,
    )
    if missing_binaries():
        raise RuntimeError(f"still missing after apt-get install: {missing_binaries()}")


def _is_ours(path: Path) -> bool:
    return path.is_symlink() and DIR_PREFIX in os.readlink(path)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def node_hardware() -> tuple[int, int]:
    """(CPUs, memory in MB to advertise) as `slurmd -C` reports them."""
    report = subprocess.run(["slurmd", "-C"], capture_output=True, text=True, check=True).stdout
    fields = dict(item.split("=", 1) for item in report.split() if "=" in item)
    return int(fields["CPUs"]), max(1024, int(fields["RealMemory"]) - 512)


def make_fake_gpus(root: Path, count: int) -> str:
    """`count` GPU device files under root/gpus; the File= value naming them in gres.conf."""
    (root / "gpus").mkdir(exist_ok=True)
    for index in range(count):  # GRES files must be devices: /dev/null stands in
        (root / "gpus" / f"nvidia{index}").symlink_to("/dev/null")
    return f"{root}/gpus/nvidia[0-{count - 1}]"


def shared_slurm_settings(root: Path, cluster_name: str, controller_host: str, controller: str) -> dict:
    """slurm.conf keys every test cluster here uses: private ports and munged, no cgroups (the
    container has none), fake-GPU GRES, controller state and logs under root. The slurmd paths
    and timeouts are each cluster's own."""
    return {
        "ClusterName": cluster_name,
        "SlurmctldHost": f"{controller_host}({controller})",
        "SlurmctldPort": free_port(),
        "SlurmdPort": free_port(),
        "SlurmUser": "root",
        "SlurmdUser": "root",
        "AuthType": "auth/munge",
        "AuthInfo": f"socket={root}/munge/munge.socket",
        "CredType": "cred/munge",
        "ProctrackType": "proctrack/linuxproc",
        "TaskPlugin": "task/none",
        "JobAcctGatherType": "jobacct_gather/none",
        "AccountingStorageType": "accounting_storage/none",
        "JobCompType": "jobcomp/none",
        "MpiDefault": "none",
        "SelectType": "select/cons_tres",
        "SelectTypeParameters": "CR_Core_Memory",
        "GresTypes": "gpu",
        "SlurmdParameters": "config_overrides",
        "ReturnToService": 2,
        "MinJobAge": 600,
        "SchedulerParameters": "sched_interval=2",
        "StateSaveLocation": root / "state",
        "SlurmctldPidFile": root / "run" / "slurmctld.pid",
        "SlurmctldLogFile": root / "log" / "slurmctld.log",
        "PluginDir": "/usr/lib/x86_64-linux-gnu/slurm-wlm",
    }


def write_slurm_conf(root: Path, host: str) -> Path:
    cpus, memory_mb = node_hardware()
    cpus = max(cpus, NODE_CPUS)
    for name in ("state", "spool", "log", "run"):
        (root / name).mkdir(exist_ok=True)
    gpu_files = make_fake_gpus(root, FAKE_GPUS)
    (root / "gres.conf").write_text(f"AutoDetect=off\nNodeName={host} Name=gpu File={gpu_files}\n")
    settings = {
        **shared_slurm_settings(root, "errorseqtest", host, "127.0.0.1"),
        "KillWait": 30,
        "SlurmdSpoolDir": root / "spool",
        "SlurmdPidFile": root / "run" / "slurmd.pid",
        "SlurmdLogFile": root / "log" / "slurmd.log",
    }
    lines = [f"{key}={value}" for key, value in settings.items()]
    lines.append(
        f"NodeName={host} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={memory_mb} "
        f"Gres=gpu:{FAKE_GPUS} State=UNKNOWN"
    )
    lines.append(f"PartitionName={PARTITION} Nodes={host} Default=YES MaxTime=INFINITE State=UP")
    conf = root / "slurm.conf"
    conf.write_text("\n".join(lines) + "\n")
    return conf


def start_munge(root: Path) -> subprocess.Popen:
    munge_dir = root / "munge"
    munge_dir.mkdir()
    munge_dir.chmod(0o755)  # munged wants its socket directory searchable by all
    key = munge_dir / "munge.key"
    subprocess.run(["mungekey", "--create", f"--keyfile={key}"], check=True, capture_output=True)
    shutil.chown(munge_dir, "munge", "munge")
    shutil.chown(key, "munge", "munge")
    key.chmod(0o400)
    command = [
        "munged",
        "--foreground",
        f"--key-file={key}",
        f"--socket={munge_dir}/munge.socket",
        f"--pid-file={munge_dir}/munged.pid",
        f"--log-file={munge_dir}/munged.log",
        f"--seed-file={munge_dir}/munged.seed",
    ]
    daemon = _spawn(command, root / "log" / "munged.out", user="munge")
    wait_for(lambda: (munge_dir / "munge.socket").exists(), "munged socket", daemon)
    return daemon


def _spawn(command: list[str], output: Path, user: str | None = None) -> subprocess.Popen:
    with open(output, "w") as log:
        return subprocess.Popen(
            command,
            stdout=log,
            stderr=subprocess.STDOUT,
            user=user,
            group=user,
            extra_groups=[] if user else None,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )


def wait_for(condition, what: str, daemon: subprocess.Popen | None = None, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        if daemon is not None and daemon.poll() is not None:
            program = daemon.args[0] if isinstance(daemon.args, list) else daemon.args
            raise RuntimeError(f"{what}: {program!s} exited with {daemon.returncode}")
        time.sleep(0.3)
    raise TimeoutError(f"waited {timeout:.0f} s for {what}")


def node_is_idle(cluster: SlurmCluster) -> bool:
    state = cluster.run("sinfo", "-h", "-N", "-o", "%T", check=False).strip()
    return state == "idle"


def stop_daemon(daemon: subprocess.Popen, timeout: float = 15) -> None:
    """SIGTERM one daemon we started (by its pid, which we own), then SIGKILL."""
    if daemon.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        daemon.send_signal(15)
    try:
        daemon.wait(timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            daemon.kill()
        daemon.wait(timeout)


def cancel_all_jobs(cluster: LocalCluster, timeout: float = 20) -> None:
    """Cancel this cluster's jobs and wait for them, so no job process outlives slurmd."""
    if "slurmctld" not in cluster.daemons or cluster.daemons["slurmctld"].poll() is not None:
        return
    active = cluster.run("squeue", "-h", "-o", "%i", check=False).split()
    if not active:
        return
    cluster.run("scancel", "--full", *active, check=False)
    with contextlib.suppress(TimeoutError):
        wait_for(
            lambda: not cluster.run("squeue", "-h", "-o", "%i", check=False).split(),
            "cancelled jobs to end",
            timeout=timeout,
        )


def link_system_conf(conf: Path) -> bool:
    """Point /etc/slurm/slurm.conf at our config; False when a foreign config is there."""
    if SYSTEM_CONF.exists() or SYSTEM_CONF.is_symlink():
        if not _is_ours(SYSTEM_CONF):
            return False
        SYSTEM_CONF.unlink()  # left behind by an interrupted session
    SYSTEM_CONF.parent.mkdir(parents=True, exist_ok=True)
    SYSTEM_CONF.symlink_to(conf)
    return True


def unlink_system_conf(conf: Path) -> None:
    if SYSTEM_CONF.is_symlink() and os.readlink(SYSTEM_CONF) == str(conf):
        SYSTEM_CONF.unlink()


@contextlib.contextmanager
def session_lock(lock: Path):
    """One cluster of a kind at a time on this machine, across test sessions."""
    with open(lock, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextlib.contextmanager
def slurm_cluster(parent: Path | None = None):
    """Start munged + slurmctld + slurmd on loopback; stop exactly those on exit."""
    install_slurm_packages()
    with session_lock(SESSION_LOCK):
        root = make_cluster_root(DIR_PREFIX, parent)
        host = socket.gethostname().split(".")[0]
        cluster = SlurmCluster(root, write_slurm_conf(root, host), host=host)
        if not link_system_conf(cluster.conf):
            raise RuntimeError(f"{SYSTEM_CONF} belongs to someone else")
        try:
            _start_daemons(cluster)
            yield cluster
        finally:
            cancel_all_jobs(cluster)
            for name in ("slurmd", "slurmctld", "munged"):
                if name in cluster.daemons:
                    stop_daemon(cluster.daemons[name])
            unlink_system_conf(cluster.conf)
            remove_cluster_root(root)


def make_cluster_root(prefix: str, parent: Path | None) -> Path:
    root = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    root.chmod(0o755)  # munged runs as the munge user and must reach root/munge
    return root


def remove_cluster_root(root: Path) -> None:
    if not os.environ.get("ERRORSEQ_KEEP_SLURM_DIR"):
        shutil.rmtree(root, ignore_errors=True)


def start_controller(cluster: LocalCluster) -> None:
    """munged and slurmctld, waited for until slurmctld answers a ping."""
    cluster.daemons["munged"] = start_munge(cluster.root)
    cluster.daemons["slurmctld"] = _spawn(
        ["slurmctld", "-D", "-i", "-f", str(cluster.conf)], cluster.root / "log" / "slurmctld.out"
    )
    wait_for(
        lambda: "UP" in cluster.run("scontrol", "ping", check=False),
        "slurmctld to answer",
        cluster.daemons["slurmctld"],
    )


def _start_daemons(cluster: SlurmCluster) -> None:
    start_controller(cluster)
    cluster.daemons["slurmd"] = _spawn(
        ["slurmd", "-D", "-f", str(cluster.conf)], cluster.root / "log" / "slurmd.out"
    )
    wait_for(lambda: node_is_idle(cluster), "the node to become idle", cluster.daemons["slurmd"])
