"""A throw-away two-node SLURM cluster on one machine, for multi-node tests.

Each node is a Linux network namespace with its own address on a private bridge, its own
hostname (UTS namespace) and its own mount namespace, in which a private hosts file covers
/etc/hosts and the cluster's config directory covers /etc/slurm (the SLURM executor plugin
drops SLURM_CONF before the `srun` inside a job, so the node's default path must hold ours).
One slurmctld (on the bridge address) and one munged serve both; every node has two fake GPUs
as in tests/slurm_cluster.py. Nothing machine-wide changes: no /etc file is touched outside the
node namespaces, and teardown removes the namespaces, the bridge and every process left in them.

    with multinode_cluster() as cluster:      # root; installs Debian's Slurm when missing
        cluster.run("sinfo")
        cluster.cut_network("node2"); cluster.restore_network("node2")

Facts this rests on: ../shared/notes/multinode-slurm.md (nsenter, not `ip netns exec`, which
remounts /sys and makes slurmd fail to find its cgroup directory).
"""

from __future__ import annotations

import contextlib
import fcntl
import ipaddress
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.slurm_cluster import (
    PARTITION,
    _spawn,
    cancel_all_jobs,
    free_port,
    install_slurm_packages,
    missing_binaries,
    node_hardware,
    start_munge,
    stop_daemon,
    wait_for,
)

NETWORK_TOOLS = ["ip", "nsenter", "unshare", "mount"]
LOCK = Path(tempfile.gettempdir()) / "errorseq-multinode-cluster.lock"
DIR_PREFIX = "errorseq-multinode-"
NAME_PREFIX = "esqmn"  # bridge, veth and namespace names all start with it (≤ 15 characters)
SUBNETS = [f"10.213.{third}.0/24" for third in range(100, 200)]
FAKE_GPUS = 2
# How long SLURM waits for a silent node before it declares the node DOWN and kills or requeues
# its jobs (the site default, 300 s, would make a lost-node test wait minutes).
SLURMD_TIMEOUT_S = 30


class ClusterUnavailable(RuntimeError):
    """This machine cannot host the cluster (tests skip with the message)."""


@dataclass
class Node:
    name: str
    address: str
    netns: str
    host_veth: str
    daemon: subprocess.Popen | None = None

    @property
    def netns_path(self) -> Path:
        return Path("/run/netns") / self.netns


@dataclass
class MultiNodeCluster:
    root: Path
    conf: Path
    bridge: str
    controller_address: str
    nodes: list[Node]
    daemons: dict[str, subprocess.Popen] = field(default_factory=dict)

    @property
    def env(self) -> dict[str, str]:
        return {**os.environ, "SLURM_CONF": str(self.conf)}

    def run(self, *command: str, check: bool = True) -> str:
        done = subprocess.run(command, env=self.env, capture_output=True, text=True, timeout=60)
        if check and done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed: {done.stderr.strip()}")
        return done.stdout

    def log(self, daemon: str) -> str:
        path = self.root / "log" / f"{daemon}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def node(self, name: str) -> Node:
        (node,) = [node for node in self.nodes if node.name == name]
        return node

    def node_states(self) -> dict[str, str]:
        text = self.run("sinfo", "-h", "-N", "-o", "%N %T", check=False)
        return dict(line.split() for line in text.splitlines() if len(line.split()) == 2)

    def wait_until_idle(self, timeout: float = 90) -> None:
        names = {node.name for node in self.nodes}
        wait_for(
            lambda: set(self.node_states()) == names and set(self.node_states().values()) == {"idle"},
            "all nodes idle",
            timeout=timeout,
        )

    def processes_on(self, name: str) -> list[int]:
        """PIDs of every process inside one node (its network namespace)."""
        return processes_in_netns(self.node(name).netns_path)

    def cut_network(self, name: str) -> None:
        """The node's link goes down: its processes live on, nobody reaches them."""
        _ip("link", "set", self.node(name).host_veth, "down")

    def restore_network(self, name: str) -> None:
        _ip("link", "set", self.node(name).host_veth, "up")


def why_multinode_cannot_run() -> str | None:
    """None when this machine can host the cluster, else the reason it cannot."""
    if os.environ.get("ERRORSEQ_SKIP_SLURM"):
        return "ERRORSEQ_SKIP_SLURM is set"
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "the multi-node cluster needs root (network namespaces, slurmd, munged)"
    tools = [tool for tool in NETWORK_TOOLS if not shutil.which(tool, path=_sbin_path())]
    if tools:
        return f"{', '.join(tools)} not installed (iproute2, util-linux)"
    if missing_binaries() and not shutil.which("apt-get"):
        return f"SLURM is not installed ({', '.join(missing_binaries())} missing) and there is no apt-get"
    return None


def _sbin_path() -> str:
    return os.environ.get("PATH", "") + ":/usr/sbin:/sbin"


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run(["ip", *args], capture_output=True, text=True)
    if check and done.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {done.stderr.strip()}")
    return done


def used_addresses() -> list[ipaddress.IPv4Interface]:
    text = _ip("-o", "-4", "addr", "show").stdout
    return [ipaddress.IPv4Interface(line.split()[3]) for line in text.splitlines()]


def free_subnet() -> tuple[int, ipaddress.IPv4Network]:
    """A /24 no interface of this machine is in; its index names the bridge and namespaces."""
    taken = used_addresses()
    for index, text in enumerate(SUBNETS):
        subnet = ipaddress.IPv4Network(text)
        if not any(address.ip in subnet or subnet.overlaps(address.network) for address in taken):
            return index, subnet
    raise ClusterUnavailable("no free 10.213.x.0/24 subnet for the node network")


def remove_stale_network() -> None:
    """Namespaces and links of an interrupted session (we hold the lock: none is in use)."""
    for netns in _ip("netns", "list", check=False).stdout.split("\n"):
        name = netns.split(" ")[0]
        if name.startswith(NAME_PREFIX):
            kill_processes(processes_in_netns(Path("/run/netns") / name))
            _ip("netns", "delete", name, check=False)
    for line in _ip("-o", "link", "show", check=False).stdout.splitlines():
        link = line.split(":")[1].strip().split("@")[0]
        if link.startswith(NAME_PREFIX):
            _ip("link", "delete", link, check=False)


def create_network(
    index: int, subnet: ipaddress.IPv4Network, names: list[str]
) -> tuple[str, str, list[Node]]:
    hosts = list(subnet.hosts())
    bridge, controller = f"{NAME_PREFIX}{index}br", str(hosts[0])
    try:
        _ip("link", "add", bridge, "type", "bridge")
    except RuntimeError as error:
        raise ClusterUnavailable(f"cannot create a network bridge here ({error})") from None
    _ip("addr", "add", f"{controller}/{subnet.prefixlen}", "dev", bridge)
    _ip("link", "set", bridge, "up")
    nodes = []
    for number, name in enumerate(names, start=1):
        node = Node(
            name,
            str(hosts[10 + number - 1]),
            f"{NAME_PREFIX}{index}-{name}",
            f"{NAME_PREFIX}{index}n{number}h",
        )
        inner = f"{NAME_PREFIX}{index}n{number}"
        _ip("netns", "add", node.netns)
        _ip("link", "add", node.host_veth, "type", "veth", "peer", "name", inner)
        _ip("link", "set", node.host_veth, "master", bridge, "up")
        _ip("link", "set", inner, "netns", node.netns)
        _ip("-n", node.netns, "link", "set", inner, "name", "eth0")
        _ip("-n", node.netns, "addr", "add", f"{node.address}/{subnet.prefixlen}", "dev", "eth0")
        _ip("-n", node.netns, "link", "set", "eth0", "up")
        _ip("-n", node.netns, "link", "set", "lo", "up")
        nodes.append(node)
    return bridge, controller, nodes


def delete_network(cluster: MultiNodeCluster) -> None:
    for node in cluster.nodes:
        kill_processes(processes_in_netns(node.netns_path))
        _ip("netns", "delete", node.netns, check=False)
        _ip("link", "delete", node.host_veth, check=False)
    _ip("link", "delete", cluster.bridge, check=False)


def processes_in_netns(netns_path: Path) -> list[int]:
    try:
        inode = netns_path.stat().st_ino
    except OSError:
        return []
    pids = []
    for entry in Path("/proc").glob("[0-9]*"):
        with contextlib.suppress(OSError):
            if (entry / "ns" / "net").stat().st_ino == inode:
                pids.append(int(entry.name))
    return pids


def kill_processes(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def write_node_files(root: Path, controller_host: str, controller: str, nodes: list[Node]) -> None:
    """The hosts file each node sees as /etc/hosts: every node by name, the controller too."""
    lines = ["127.0.0.1 localhost", f"{controller} {controller_host}"]
    lines += [f"{node.address} {node.name}" for node in nodes]
    (root / "hosts").write_text("\n".join(lines) + "\n")


def write_slurm_conf(root: Path, controller_host: str, controller: str, nodes: list[Node]) -> Path:
    cpus, memory_mb = node_hardware()
    etc = root / "etc"
    for name in ("state", "spool", "log", "run", "gpus", "etc"):
        (root / name).mkdir(exist_ok=True)
    for node in nodes:  # slurmd wants its spool directory to exist
        (root / "spool" / node.name).mkdir()
    for index in range(FAKE_GPUS):  # GRES files must be devices: /dev/null stands in
        (root / "gpus" / f"nvidia{index}").symlink_to("/dev/null")
    (etc / "gres.conf").write_text(
        "AutoDetect=off\n"
        + "".join(
            f"NodeName={node.name} Name=gpu File={root}/gpus/nvidia[0-{FAKE_GPUS - 1}]\n" for node in nodes
        )
    )
    settings = {
        "ClusterName": "errorseqmulti",
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
        "ReturnToService": 2,
        "MinJobAge": 600,
        "KillWait": 10,
        "SlurmdTimeout": SLURMD_TIMEOUT_S,
        "SchedulerParameters": "sched_interval=2",
        "StateSaveLocation": root / "state",
        "SlurmdSpoolDir": root / "spool" / "%n",
        "SlurmctldPidFile": root / "run" / "slurmctld.pid",
        "SlurmdPidFile": root / "run" / "slurmd-%n.pid",
        "SlurmctldLogFile": root / "log" / "slurmctld.log",
        "SlurmdLogFile": root / "log" / "slurmd-%n.log",
        "PluginDir": "/usr/lib/x86_64-linux-gnu/slurm-wlm",
    }
    lines = [f"{key}={value}" for key, value in settings.items()]
    lines += [
        f"NodeName={node.name} NodeAddr={node.address} NodeHostname={node.name} CPUs={cpus} "
        f"RealMemory={memory_mb} Gres=gpu:{FAKE_GPUS} State=UNKNOWN"
        for node in nodes
    ]
    lines.append(
        f"PartitionName={PARTITION} Nodes={','.join(node.name for node in nodes)} "
        "Default=YES MaxTime=INFINITE State=UP"
    )
    conf = etc / "slurm.conf"
    conf.write_text("\n".join(lines) + "\n")
    return conf


def node_command(cluster: MultiNodeCluster, node: Node) -> list[str]:
    """slurmd inside the node: its network, its hostname, its /etc/hosts and /etc/slurm."""
    inside = (
        f"hostname {node.name} && mount --bind {cluster.root}/hosts /etc/hosts && "
        f"mkdir -p /etc/slurm && mount --bind {cluster.conf.parent} /etc/slurm && "
        f"exec slurmd -D -N {node.name} -f {cluster.conf}"
    )
    return [
        "nsenter",
        f"--net={node.netns_path}",
        "--",
        "unshare",
        "--uts",
        "--mount",
        "--propagation",
        "private",
        "--",
        "sh",
        "-c",
        inside,
    ]


def start_daemons(cluster: MultiNodeCluster) -> None:
    root, conf = cluster.root, str(cluster.conf)
    cluster.daemons["munged"] = start_munge(root)
    cluster.daemons["slurmctld"] = _spawn(
        ["slurmctld", "-D", "-i", "-f", conf], root / "log" / "slurmctld.out"
    )
    wait_for(
        lambda: "UP" in cluster.run("scontrol", "ping", check=False),
        "slurmctld to answer",
        cluster.daemons["slurmctld"],
    )
    for node in cluster.nodes:
        node.daemon = _spawn(node_command(cluster, node), root / "log" / f"slurmd-{node.name}.out")
    cluster.wait_until_idle()


def restart_slurmd(cluster: MultiNodeCluster, name: str) -> None:
    """Start a node's slurmd again (after a test killed it) and wait for every node to be idle."""
    node = cluster.node(name)
    if node.daemon is not None and node.daemon.poll() is None:
        return
    node.daemon = _spawn(node_command(cluster, node), cluster.root / "log" / f"slurmd-{node.name}.out")
    cluster.wait_until_idle(timeout=SLURMD_TIMEOUT_S + 60)


@contextlib.contextmanager
def session_lock():
    with open(LOCK, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextlib.contextmanager
def multinode_cluster(node_names: tuple[str, ...] = ("node1", "node2"), parent: Path | None = None):
    """Start munged + slurmctld + one slurmd per node namespace; remove all of it on exit."""
    install_slurm_packages()
    with session_lock():
        remove_stale_network()
        root = Path(tempfile.mkdtemp(prefix=DIR_PREFIX, dir=parent))
        root.chmod(0o755)  # munged runs as the munge user and must reach root/munge
        index, subnet = free_subnet()
        bridge, controller, nodes = create_network(index, subnet, list(node_names))
        controller_host = socket.gethostname().split(".")[0]
        write_node_files(root, controller_host, controller, nodes)
        conf = write_slurm_conf(root, controller_host, controller, nodes)
        cluster = MultiNodeCluster(root, conf, bridge, controller, nodes)
        try:
            start_daemons(cluster)
            yield cluster
        finally:
            stop_cluster(cluster)


def stop_cluster(cluster: MultiNodeCluster) -> None:
    """Cancel the jobs, stop the daemons we started, kill what is left inside the nodes."""
    for node in cluster.nodes:
        with contextlib.suppress(RuntimeError):
            cluster.restore_network(node.name)
    cancel_all_jobs(cluster)
    for node in cluster.nodes:
        if node.daemon is not None:
            stop_daemon(node.daemon)
    for name in ("slurmctld", "munged"):
        if name in cluster.daemons:
            stop_daemon(cluster.daemons[name])
    delete_network(cluster)
    if not os.environ.get("ERRORSEQ_KEEP_SLURM_DIR"):
        shutil.rmtree(cluster.root, ignore_errors=True)


def wait_seconds(condition, timeout: float, interval: float = 0.2) -> float | None:
    """Seconds until condition() held, or None after timeout."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if condition():
            return time.monotonic() - start
        time.sleep(interval)
    return None
