"""Policy node on the robot: `ros2 launch sim2real_deploy robot.launch.py policy:=/path/policy.onnx`.

The robot's driver (ros2_control with a forward_position_controller on the joints listed in
config/go2.yaml `output_joint_names`) must already publish joint_states and imu.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare


def generate_launch_description() -> LaunchDescription:
    params_file = PathJoinSubstitution([FindPackageShare("sim2real_deploy"), "config", "go2.yaml"])
    return LaunchDescription(
        [
            DeclareLaunchArgument("policy", description="exported policy .onnx (sim2real schema)"),
            DeclareLaunchArgument("params_file", default_value=params_file, description="policy_node parameters"),
            Node(
                package="sim2real_deploy",
                executable="policy_node",
                name="policy_node",
                output="screen",
                parameters=[LaunchConfiguration("params_file"), {"policy_path": LaunchConfiguration("policy")}],
            ),
        ]
    )
