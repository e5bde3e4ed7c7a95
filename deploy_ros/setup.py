"""ament_python package: `colcon build` on the robot, or `pip install -e deploy_ros` in a ROS venv."""

from glob import glob

from setuptools import find_packages, setup

PACKAGE = "sim2real_deploy"

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(exclude=["test"]),
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/config", glob("config/*.yaml")),
        (f"share/{PACKAGE}/launch", glob("launch/*.launch.py")),
    ],
    # rclpy and the message packages come from ROS (apt or the ros-jazzy-* wheels), not from PyPI names.
    install_requires=["setuptools", "numpy", "onnxruntime"],
    extras_require={"sim": ["mujoco"], "test": ["pytest", "onnx", "mujoco"]},
    zip_safe=True,
    maintainer="sim2real",
    maintainer_email="sim2real@example.com",
    description="Serve sim2real's exported ONNX policies on a robot through ROS 2, safely.",
    license="BSD-3-Clause",
    tests_require=["pytest"],
    entry_points={
        "console_scripts": [
            "policy_node = sim2real_deploy.policy_node:main",
            "mujoco_bridge = sim2real_deploy.mujoco_bridge:main",
        ],
    },
)
