"""Network namespaces that stand in for machines: one per node, on a private bridge (root only).

`create_node_network(["node1", "node2"])` makes a bridge with the first address of a free
10.213.x.0/24 (the host side: where slurmctld listens) and one namespace per node with `eth0`
at .11, .12, ... `in_node(node, script)` is the command that runs a shell script inside a node:
its network namespace (nsenter: `ip netns exec` would remount /sys, and slurmd 22.05 then dies
looking for its cgroup directory), plus a UTS and a private mount namespace of its own, so the
script can set the node's hostname and bind-mount files over /etc without the machine seeing it.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

NAME_PREFIX = "esqmn"  # bridge, veth and namespace names all start with it (≤ 15 characters)
SUBNETS = [f"10.213.{third}.0/24" for third in range(100, 200)]
NETNS_DIR = Path("/run/netns")


class NetworkUnavailable(RuntimeError):
    """This machine will not make the bridge or namespaces (tests skip with the message)."""


@dataclass
class Node:
    name: str
    address: str
    netns: str
    host_veth: str  # the bridge's end of the node's link
    daemon: subprocess.Popen | None = None

    @property
    def netns_path(self) -> Path:
        return NETNS_DIR / self.netns


@dataclass
class NodeNetwork:
    bridge: str
    host_address: str  # the bridge's address: the machine itself, seen from the nodes
    nodes: list[Node]


def ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run(["ip", *args], capture_output=True, text=True)
    if check and done.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {done.stderr.strip()}")
    return done


def free_subnet() -> tuple[int, ipaddress.IPv4Network]:
    """A /24 no interface of this machine is in; its index names the bridge and namespaces."""
    text = ip("-o", "-4", "addr", "show").stdout
    taken = [ipaddress.IPv4Interface(line.split()[3]) for line in text.splitlines()]
    for index, candidate in enumerate(SUBNETS):
        subnet = ipaddress.IPv4Network(candidate)
        if not any(address.ip in subnet or subnet.overlaps(address.network) for address in taken):
            return index, subnet
    raise NetworkUnavailable("no free 10.213.x.0/24 subnet for the node network")


def remove_stale_network() -> None:
    """Namespaces and links of an interrupted session (call it holding the session lock)."""
    for line in ip("netns", "list", check=False).stdout.splitlines():
        name = line.split(" ")[0]
        if name.startswith(NAME_PREFIX):
            kill_processes(processes_in_netns(NETNS_DIR / name))
            ip("netns", "delete", name, check=False)
    for line in ip("-o", "link", "show", check=False).stdout.splitlines():
        link = line.split(":")[1].strip().split("@")[0]
        if link.startswith(NAME_PREFIX):
            ip("link", "delete", link, check=False)


def create_node_network(names: list[str]) -> NodeNetwork:
    index, subnet = free_subnet()
    hosts = list(subnet.hosts())
    network = NodeNetwork(f"{NAME_PREFIX}{index}br", str(hosts[0]), [])
    try:
        ip("link", "add", network.bridge, "type", "bridge")
    except RuntimeError as error:
        raise NetworkUnavailable(f"cannot create a network bridge here ({error})") from None
    ip("addr", "add", f"{network.host_address}/{subnet.prefixlen}", "dev", network.bridge)
    ip("link", "set", network.bridge, "up")
    for number, name in enumerate(names, start=1):
        node = Node(
            name, str(hosts[9 + number]), f"{NAME_PREFIX}{index}-{name}", f"{NAME_PREFIX}{index}n{number}h"
        )
        add_node(network.bridge, node, f"{NAME_PREFIX}{index}n{number}", subnet.prefixlen)
        network.nodes.append(node)
    return network


def add_node(bridge: str, node: Node, inner: str, prefixlen: int) -> None:
    """The node's namespace, linked to the bridge by a veth pair; `eth0` inside."""
    ip("netns", "add", node.netns)
    ip("link", "add", node.host_veth, "type", "veth", "peer", "name", inner)
    ip("link", "set", node.host_veth, "master", bridge, "up")
    ip("link", "set", inner, "netns", node.netns)
    ip("-n", node.netns, "link", "set", inner, "name", "eth0")
    ip("-n", node.netns, "addr", "add", f"{node.address}/{prefixlen}", "dev", "eth0")
    ip("-n", node.netns, "link", "set", "eth0", "up")
    ip("-n", node.netns, "link", "set", "lo", "up")


def delete_node_network(network: NodeNetwork) -> None:
    """Kill every process left inside the nodes, then remove namespaces, links and bridge."""
    for node in network.nodes:
        kill_processes(processes_in_netns(node.netns_path))
        ip("netns", "delete", node.netns, check=False)
        ip("link", "delete", node.host_veth, check=False)
    ip("link", "delete", network.bridge, check=False)


def in_node(node: Node, script: str) -> list[str]:
    """The command that runs `script` (sh) inside the node's network, UTS and mount namespaces."""
    return ["nsenter", f"--net={node.netns_path}", "--", "unshare", "--uts", "--mount",
            "--propagation", "private", "--", "sh", "-c", script]  # fmt: skip


def set_link(node: Node, up: bool) -> None:
    """Down: the node's processes live on and nobody reaches them (a lost network)."""
    ip("link", "set", node.host_veth, "up" if up else "down")


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
