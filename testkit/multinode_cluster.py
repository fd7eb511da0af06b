"""A throw-away two-node SLURM cluster on one machine, for multi-node tests.

Each node is a Linux network namespace with its own address on a private bridge, its own
hostname (UTS namespace) and its own mount namespace, in which a private hosts file covers
/etc/hosts and the cluster's config directory covers /etc/slurm (the SLURM executor plugin
drops SLURM_CONF before the `srun` inside a job, so the node's default path must hold ours).
One slurmctld (on the bridge address) and one munged serve both; every node has two fake GPUs
as in testkit/slurm_cluster.py. Nothing machine-wide changes: no /etc file is touched outside the
node namespaces, and teardown removes the namespaces, the bridge and every process left in them.

    with multinode_cluster() as cluster:      # root; installs Debian's Slurm when missing
        cluster.run("sinfo")
        cluster.cut_network("node2"); cluster.restore_network("node2")

The nodes' namespaces: testkit/node_network.py. Facts this rests on: ../shared/notes/
multinode-slurm.md.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from testkit.node_network import (
    NetworkUnavailable,
    Node,
    NodeNetwork,
    create_node_network,
    delete_node_network,
    in_node,
    processes_in_netns,
    remove_stale_network,
    set_link,
)
from testkit.slurm_cluster import (
    PARTITION,
    LocalCluster,
    _spawn,
    cancel_all_jobs,
    install_slurm_packages,
    make_cluster_root,
    make_fake_gpus,
    missing_binaries,
    node_hardware,
    remove_cluster_root,
    session_lock,
    shared_slurm_settings,
    start_controller,
    stop_daemon,
    wait_for,
)

ClusterUnavailable = NetworkUnavailable  # this machine cannot host the cluster
NETWORK_TOOLS = ["ip", "nsenter", "unshare", "mount"]
LOCK = Path(tempfile.gettempdir()) / "errorseq-multinode-cluster.lock"
DIR_PREFIX = "errorseq-multinode-"
# Each node advertises more than the machine has (SlurmdParameters=config_overrides): several
# two-node jobs of 2 CPUs and 2 GPUs per node can run side by side (the tests start three at
# once). The GPUs are /dev/null: only SLURM's bookkeeping sees them.
NODE_CPUS = 8
FAKE_GPUS = 8
# How long SLURM waits for a silent node before it declares the node DOWN and kills or requeues
# its jobs (the site default, 300 s, would make a lost-node test wait minutes).
SLURMD_TIMEOUT_S = 30


@dataclass
class MultiNodeCluster(LocalCluster):
    network: NodeNetwork

    @property
    def nodes(self) -> list[Node]:
        return self.network.nodes

    def node(self, name: str) -> Node:
        (node,) = [node for node in self.nodes if node.name == name]
        return node

    def node_states(self) -> dict[str, str]:
        text = self.run("sinfo", "-h", "-N", "-o", "%N %T", check=False)
        return dict(line.split() for line in text.splitlines() if len(line.split()) == 2)

    def wait_until_idle(self, timeout: float = 90) -> None:
        expected = {node.name: "idle" for node in self.nodes}
        wait_for(lambda: self.node_states() == expected, "all nodes idle", timeout=timeout)

    def processes_on(self, name: str) -> list[int]:
        """PIDs of every process inside one node (its network namespace)."""
        return processes_in_netns(self.node(name).netns_path)

    def cut_network(self, name: str) -> None:
        set_link(self.node(name), up=False)

    def restore_network(self, name: str) -> None:
        set_link(self.node(name), up=True)


def why_multinode_cannot_run() -> str | None:
    """None when this machine can host the cluster, else the reason it cannot."""
    if os.environ.get("ERRORSEQ_SKIP_SLURM"):
        return "ERRORSEQ_SKIP_SLURM is set"
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "the multi-node cluster needs root (network namespaces, slurmd, munged)"
    path = os.environ.get("PATH", "") + ":/usr/sbin:/sbin"
    tools = [tool for tool in NETWORK_TOOLS if not shutil.which(tool, path=path)]
    if tools:
        return f"{', '.join(tools)} not installed (iproute2, util-linux)"
    if missing_binaries() and not shutil.which("apt-get"):
        return f"SLURM is not installed ({', '.join(missing_binaries())} missing) and there is no apt-get"
    return None


def write_node_files(root: Path, controller_host: str, controller: str, nodes: list[Node]) -> None:
    """The hosts file each node sees as /etc/hosts: every node by name, the controller too."""
    lines = ["127.0.0.1 localhost", f"{controller} {controller_host}"]
    lines += [f"{node.address} {node.name}" for node in nodes]
    (root / "hosts").write_text("\n".join(lines) + "\n")


def write_slurm_conf(root: Path, controller_host: str, controller: str, nodes: list[Node]) -> Path:
    _, memory_mb = node_hardware()
    etc = root / "etc"
    for name in ("state", "spool", "log", "run", "etc"):
        (root / name).mkdir(exist_ok=True)
    for node in nodes:  # slurmd wants its spool directory to exist
        (root / "spool" / node.name).mkdir()
    gpu_files = make_fake_gpus(root, FAKE_GPUS)
    (etc / "gres.conf").write_text(
        "AutoDetect=off\n" + "".join(f"NodeName={node.name} Name=gpu File={gpu_files}\n" for node in nodes)
    )
    settings = {
        **shared_slurm_settings(root, "errorseqmulti", controller_host, controller),
        "KillWait": 10,
        "SlurmdTimeout": SLURMD_TIMEOUT_S,
        "SlurmdSpoolDir": root / "spool" / "%n",
        "SlurmdPidFile": root / "run" / "slurmd-%n.pid",
        "SlurmdLogFile": root / "log" / "slurmd-%n.log",
    }
    lines = [f"{key}={value}" for key, value in settings.items()]
    lines += [
        f"NodeName={node.name} NodeAddr={node.address} NodeHostname={node.name} CPUs={NODE_CPUS} "
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
    return in_node(
        node,
        f"hostname {node.name} && mount --bind {cluster.root}/hosts /etc/hosts && "
        f"mkdir -p /etc/slurm && mount --bind {cluster.conf.parent} /etc/slurm && "
        f"exec slurmd -D -N {node.name} -f {cluster.conf}",
    )


def start_daemons(cluster: MultiNodeCluster) -> None:
    start_controller(cluster)
    for node in cluster.nodes:
        node.daemon = _spawn(node_command(cluster, node), cluster.root / "log" / f"slurmd-{node.name}.out")
    cluster.wait_until_idle()


@contextlib.contextmanager
def multinode_cluster(node_names: tuple[str, ...] = ("node1", "node2"), parent: Path | None = None):
    """Start munged + slurmctld + one slurmd per node namespace; remove all of it on exit."""
    install_slurm_packages()
    with session_lock(LOCK):
        remove_stale_network()
        root = make_cluster_root(DIR_PREFIX, parent)
        network = create_node_network(list(node_names))
        controller_host = socket.gethostname().split(".")[0]
        write_node_files(root, controller_host, network.host_address, network.nodes)
        conf = write_slurm_conf(root, controller_host, network.host_address, network.nodes)
        cluster = MultiNodeCluster(root, conf, network)
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
    delete_node_network(cluster.network)
    remove_cluster_root(cluster.root)


def wait_seconds(condition, timeout: float, interval: float = 0.2) -> float | None:
    """Seconds until condition() held, or None after timeout."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if condition():
            return time.monotonic() - start
        time.sleep(interval)
    return None
