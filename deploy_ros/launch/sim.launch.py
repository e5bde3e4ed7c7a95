"""MuJoCo stand-in for the robot plus the same robot.launch.py:
`ros2 launch sim2real_deploy sim.launch.py policy:=/path/policy.onnx` (run from the repo root, or pass mjcf:=).
Another robot: pass its parameter files, e.g. for the G1 `sim_params_file:=<share>/config/g1_sim.yaml
params_file:=<share>/config/g1.yaml` (<share>: `ros2 pkg prefix sim2real_deploy`/share/sim2real_deploy).
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare


def generate_launch_description() -> LaunchDescription:
    share = FindPackageShare("sim2real_deploy")
    sim_params = PathJoinSubstitution([share, "config", "go2_sim.yaml"])
    node_params = PathJoinSubstitution([share, "config", "go2.yaml"])
    robot_launch = PathJoinSubstitution([share, "launch", "robot.launch.py"])
    return LaunchDescription(
        [
            DeclareLaunchArgument("policy", description="exported policy .onnx (sim2real schema)"),
            DeclareLaunchArgument("sim_params_file", default_value=sim_params, description="mujoco_bridge parameters"),
            DeclareLaunchArgument("mjcf", default_value="", description="robot MJCF; empty = the policy's robot.mjcf"),
            DeclareLaunchArgument("params_file", default_value=node_params, description="policy_node parameters"),
            Node(
                package="sim2real_deploy",
                executable="mujoco_bridge",
                name="mujoco_bridge",
                output="screen",
                parameters=[
                    LaunchConfiguration("sim_params_file"),
                    {"policy_path": LaunchConfiguration("policy"), "mjcf_path": LaunchConfiguration("mjcf")},
                ],
            ),
            # The very same policy node, parameters and topics as on the robot.
            IncludeLaunchDescription(
                PythonLaunchDescriptionSource(robot_launch),
                launch_arguments={
                    "policy": LaunchConfiguration("policy"),
                    "params_file": LaunchConfiguration("params_file"),
                }.items(),
            ),
        ]
    )
