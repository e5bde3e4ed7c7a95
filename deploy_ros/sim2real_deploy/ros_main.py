"""What the console entry points share: declaring parameters, and a main that builds a node, spins it and shuts
down cleanly."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import rclpy
from rclpy.exceptions import ParameterUninitializedException
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter

from sim2real_deploy.policy_file import PolicyFileError


def declare_parameters(node: Node, parameters: dict[str, Any]) -> dict[str, Any]:
    """Declare each parameter and return the values. An empty list default cannot carry its type, so a
    string array is declared without a value and read back as [] when no one sets it."""
    values = {}
    for name, default in parameters.items():
        if isinstance(default, list) and not default:
            node.declare_parameter(name, Parameter.Type.STRING_ARRAY)
            try:
                values[name] = list(node.get_parameter(name).value)
            except ParameterUninitializedException:
                values[name] = []
        else:
            values[name] = node.declare_parameter(name, default).value
    return values


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
