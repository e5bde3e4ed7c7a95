"""Robot specifications: the one source of truth per robot.

Plain data (no Isaac Lab, no torch): the Isaac Lab articulation config, the ONNX metadata, the
native-MuJoCo sim-to-sim check and the ROS node all derive from these objects.
"""

from sim2real.robots.g1 import G1
from sim2real.robots.go2 import GO2
from sim2real.robots.panda import PANDA
from sim2real.robots.spec import JointGroup, RobotSpec

ROBOTS: dict[str, RobotSpec] = {GO2.name: GO2, G1.name: G1, PANDA.name: PANDA}

__all__ = ["G1", "GO2", "PANDA", "ROBOTS", "JointGroup", "RobotSpec"]
