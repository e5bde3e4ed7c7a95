"""Launch files cannot run here (no `launch`/`launch_ros` wheels), so check what they start by reading them:
every executable is a console entry point, every parameter file exists and names only declared parameters
(checked by loading it into the real nodes). test_closed_loop.py then runs those nodes by hand with the same
parameter files."""

from __future__ import annotations

import ast
import configparser
from importlib.metadata import entry_points
from pathlib import Path

import pytest
import yaml
from conftest import PACKAGE
from rclpy.parameter import Parameter

LAUNCH_FILES = sorted((PACKAGE / "launch").glob("*.launch.py"))


def console_scripts() -> dict[str, str]:
    """name -> 'module:function' from setup.py's entry_points."""
    tree = ast.parse((PACKAGE / "setup.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "entry_points":
            scripts = ast.literal_eval(node.value)["console_scripts"]
            return dict(item.replace(" ", "").split("=") for item in scripts)
    raise AssertionError("setup.py has no entry_points")


def call_name(node: ast.AST) -> str | None:
    return node.func.id if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) else None


def kwarg(call: ast.Call, name: str) -> ast.AST | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def share_path(node: ast.AST, resolve=lambda n: n) -> str | None:
    """'config/go2.yaml' from PathJoinSubstitution([FindPackageShare('sim2real_deploy'), 'config', 'go2.yaml'])."""
    if call_name(node) != "PathJoinSubstitution":
        return None
    parts = [resolve(p) for p in node.args[0].elts]
    assert call_name(parts[0]) == "FindPackageShare" and parts[0].args[0].value == "sim2real_deploy"
    return "/".join(p.value for p in parts[1:])


def launch_structure(path: Path) -> tuple[list[dict], list[str]]:
    """The Node actions (executable, name, parameter files, inline parameter names) and included launch files."""
    tree = ast.parse(path.read_text())
    variables = {
        t.id: n.value for n in ast.walk(tree) if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)
    }
    resolve = lambda n: variables.get(n.id, n) if isinstance(n, ast.Name) else n  # noqa: E731
    arg_defaults = {}
    for call in (n for n in ast.walk(tree) if call_name(n) == "DeclareLaunchArgument"):
        default = kwarg(call, "default_value")
        arg_defaults[call.args[0].value] = share_path(resolve(default), resolve) if default is not None else None
    nodes, includes = [], []
    for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
        if call_name(call) == "Node":
            files, inline = [], []
            for item in kwarg(call, "parameters").elts:
                if isinstance(item, ast.Dict):
                    inline += [k.value for k in item.keys]
                elif call_name(item) == "LaunchConfiguration":
                    files.append(arg_defaults[item.args[0].value])
                else:
                    files.append(share_path(resolve(item), resolve))
            nodes.append(
                {
                    "package": kwarg(call, "package").value,
                    "executable": kwarg(call, "executable").value,
                    "name": kwarg(call, "name").value,
                    "files": files,
                    "inline": inline,
                }
            )
        elif call_name(call) == "PythonLaunchDescriptionSource":
            includes.append(share_path(resolve(call.args[0]), resolve))
    return nodes, includes


def node_class(executable: str):
    from sim2real_deploy.mujoco_bridge import MujocoBridge
    from sim2real_deploy.policy_node import PolicyNode

    return {"policy_node": PolicyNode, "mujoco_bridge": MujocoBridge}[executable]


def test_package_layout():
    assert LAUNCH_FILES and {p.name for p in LAUNCH_FILES} >= {"robot.launch.py", "sim.launch.py"}
    assert (PACKAGE / "resource/sim2real_deploy").is_file() and (PACKAGE / "package.xml").is_file()
    cfg = configparser.ConfigParser()
    cfg.read(PACKAGE / "setup.cfg")  # colcon/ros2 run look for executables in lib/<package>
    assert cfg["install"]["install_scripts"] == "$base/lib/sim2real_deploy"
    installed = {e.name: e.value for e in entry_points(group="console_scripts")}
    for name, target in console_scripts().items():
        assert installed.get(name) == target, f"{name} not installed (pip install -e deploy_ros)"


@pytest.mark.parametrize("launch_file", LAUNCH_FILES, ids=lambda p: p.name)
def test_launch_file_starts_known_executables_with_valid_parameters(launch_file, ros_context, fixture_policy):
    nodes, includes = launch_structure(launch_file)
    assert nodes or includes
    for include in includes:
        assert (PACKAGE / include).is_file(), include
    scripts = console_scripts()
    for spec in nodes:
        assert spec["package"] == "sim2real_deploy"
        assert spec["executable"] in scripts, f"{spec['executable']} is not a console entry point"
        cls = node_class(spec["executable"])
        for rel in spec["files"]:
            params_file = PACKAGE / rel
            assert params_file.is_file(), rel
            section = yaml.safe_load(params_file.read_text())
            assert list(section) == [spec["name"]], f"{rel} must configure exactly node '{spec['name']}'"
            values = section[spec["name"]]["ros__parameters"]
            # Load the file into the real node: every name must be declared and take the file's value.
            node = cls(
                context=ros_context,
                cli_args=["--ros-args", "--params-file", str(params_file)],
                parameter_overrides=[Parameter("policy_path", value=str(fixture_policy))],
            )
            try:
                for name, value in values.items():
                    assert node.has_parameter(name), f"{rel}: '{name}' is not a parameter of {spec['executable']}"
                    if name != "policy_path":
                        assert node.get_parameter(name).value == value, name
                for name in spec["inline"]:
                    assert node.has_parameter(name), f"{launch_file.name}: inline parameter '{name}' not declared"
            finally:
                node.destroy_node()


@pytest.mark.parametrize("path", sorted((PACKAGE / "config").glob("*.yaml")), ids=lambda p: p.name)
def test_parameter_files_give_each_parameter_its_declared_type(path):
    """rclpy refuses a value whose type differs from the declared default's (``1`` for a double), so the node would
    not start: every value in every shipped parameter file, each robot's included, has its declared type."""
    from sim2real_deploy import mujoco_bridge, policy_node

    declared = {policy_node.NODE_NAME: policy_node.PARAMETERS, mujoco_bridge.NODE_NAME: mujoco_bridge.PARAMETERS}
    for node, section in yaml.safe_load(path.read_text()).items():
        for name, value in section["ros__parameters"].items():
            assert type(value) is type(declared[node][name]), f"{path.name}: {node}.{name} = {value!r}"
