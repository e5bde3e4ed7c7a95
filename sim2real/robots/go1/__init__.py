"""Unitree Go1 quadruped, from a bare MJCF (mjlab 1.6.0's Go1, Apache-2.0): no actuators, no keyframe, no IMU
sensors in the file. The robot side adds one torque motor per joint and reads the IMU from the free joint.

Motor facts from mjlab's ``go1_constants.py`` (``assets/robots/go1/README.md``): hip/thigh 23.7 N m peak, 30.1 rad/s
no-load; knee 35.55 N m, 20.06 rad/s. PD gains are the Go2 recipe's (Kp 25, Kd 0.5).
"""

from sim2real.robots.go2 import MIRROR
from sim2real.robots.spec import JointGroup, RobotSpec, task_entry_points

_LEGS = ("FL", "FR", "RL", "RR")

SPEC = RobotSpec(
    name="go1",
    mjcf="go1.xml",
    usd="usd/go1.usdc",
    joint_names=tuple(f"{leg}_{part}_joint" for leg in _LEGS for part in ("hip", "thigh", "calf")),
    # mjlab's Go1 stance: feet just touch the ground at a base height of 0.2785 m
    default_joint_pos={"[FR]L_hip_joint": 0.1, "[FR]R_hip_joint": -0.1, ".*_thigh_joint": 0.9, ".*_calf_joint": -1.8},
    joint_groups=(
        JointGroup(".*_(hip|thigh)_joint", stiffness=25.0, damping=0.5, effort_limit=23.7, velocity_limit=30.1),
        JointGroup(".*_calf_joint", stiffness=25.0, damping=0.5, effort_limit=35.55, velocity_limit=20.06),
    ),
    base_body="trunk",
    foot_bodies=tuple(f"{leg}_calf" for leg in _LEGS),  # the foot spheres belong to the calf bodies
    init_base_height=0.3,
    undesired_contact_bodies=("trunk", *(f"{leg}_thigh" for leg in _LEGS), *(f"{leg}_hip" for leg in _LEGS)),
    mirror=MIRROR,  # Unitree's leg naming, as the Go2
)

TASKS = task_entry_points(
    __name__,
    {"Sim2Real-Velocity-Flat-Go1-v0": ("Go1FlatEnvCfg", "Go1FlatPPORunnerCfg")},
)
