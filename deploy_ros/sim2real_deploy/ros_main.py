"""The console entry points' shared main: build a node, spin it, shut down cleanly."""

from __future__ import annotations

from collections.abc import Callable

import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node

from sim2real_deploy.policy_file import PolicyFileError


def run_node(make_node: Callable[[], Node], name: str, args: list[str] | None = None) -> int:
    """Exit status 1 (with the reason logged) when the policy file cannot be served, else 0 after shutdown."""
    rclpy.init(args=args)
    try:
        node = make_node()
    except PolicyFileError as exc:
        rclpy.logging.get_logger(name).fatal(f"cannot serve this policy: {exc}")
        rclpy.try_shutdown()
        return 1
    executor = SingleThreadedExecutor()  # one thread: callbacks never race
    executor.add_node(node)
    try:
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0
