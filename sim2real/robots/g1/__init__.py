"""Unitree G1 humanoid, 23-DoF variant (MJCF from unitreerobotics/unitree_mujoco, BSD-3-Clause).

The 23-DoF G1 has one wrist joint (roll) per arm and one waist joint (yaw). Unitree's MJCF also carries six
massless placeholder bodies for the 29-DoF joints it lacks (waist roll/pitch, wrist pitch/yaw), floating 20 m up;
the copy in ``assets/robots/g1/`` drops them (they would be six extra free-floating articulations).
"""

from sim2real.robots.spec import JointGroup, Mirror, RobotSpec, task_entry_points

_LEG = ("hip_pitch", "hip_roll", "hip_yaw", "knee", "ankle_pitch", "ankle_roll")
_ARM = ("shoulder_pitch", "shoulder_roll", "shoulder_yaw", "elbow", "wrist_roll")

SPEC = RobotSpec(
    name="g1",
    mjcf="g1_23dof.xml",
    usd="usd/g1.usdc",
    # Unitree's motor order (left leg, right leg, waist, left arm, right arm) without the 29-DoF-only joints.
    joint_names=(
        *(f"left_{j}_joint" for j in _LEG),
        *(f"right_{j}_joint" for j in _LEG),
        "waist_yaw_joint",
        *(f"left_{j}_joint" for j in _ARM),
        *(f"right_{j}_joint" for j in _ARM),
    ),
    # Slightly crouched stance (knees bent, so the knee is never at its limit) with the arms hanging forward.
    default_joint_pos={
        ".*_hip_pitch_joint": -0.2,
        ".*_hip_(roll|yaw)_joint": 0.0,
        ".*_knee_joint": 0.42,
        ".*_ankle_pitch_joint": -0.23,
        ".*_ankle_roll_joint": 0.0,
        "waist_yaw_joint": 0.0,
        ".*_shoulder_pitch_joint": 0.35,
        "left_shoulder_roll_joint": 0.16,
        "right_shoulder_roll_joint": -0.16,
        ".*_shoulder_yaw_joint": 0.0,
        ".*_elbow_joint": 0.87,
        ".*_wrist_roll_joint": 0.0,
    },
    # Gains of unitree_rl_gym's G1 for the legs (hips 100/2, knees 150/4, ankles 40/2); waist and arms stiff enough
    # to hold their pose against the gait. Effort limits from the MJCF (88 / 139 / 50 / 25 N m); no-load speeds
    # from Unitree's motor data (N7520-14.3: 32 rad/s, N7520-22.5: 20, N5020: 37).
    joint_groups=(
        JointGroup(".*_hip_.*_joint", stiffness=100.0, damping=2.0, effort_limit=88.0, velocity_limit=32.0),
        JointGroup(".*_knee_joint", stiffness=150.0, damping=4.0, effort_limit=139.0, velocity_limit=20.0),
        JointGroup(".*_ankle_.*_joint", stiffness=40.0, damping=2.0, effort_limit=50.0, velocity_limit=37.0),
        JointGroup("waist_yaw_joint", stiffness=200.0, damping=5.0, effort_limit=88.0, velocity_limit=32.0),
        JointGroup(
            ".*_(shoulder_.*|elbow|wrist_roll)_joint",
            stiffness=40.0,
            damping=1.0,
            effort_limit=25.0,
            velocity_limit=37.0,
        ),
    ),
    base_body="pelvis",
    foot_bodies=("left_ankle_roll_link", "right_ankle_roll_link"),  # four contact spheres each
    sole_offset=0.035,  # the ankle-roll link's contact spheres: 0.005 m radius at z = -0.03
    init_base_height=0.79,  # the feet touch the ground at 0.778 m in the default pose
    fall_contact_bodies=("torso_link",),
    # left and right swap; roll and yaw joints (x and z axes) turn the other way in the mirror image
    mirror=Mirror(pairs=(("left_", "right_"),), negated=r".*_(roll|yaw)_joint"),
    # standing pelvis 0.78 m: fallen below 0.59 m, where a seated (~0.3 m) or kneeling G1 is; tilt ~45 deg
    fall_height_fraction=0.75,
    fall_tilt=0.8,
    # a biped catches itself with fast leg targets: the first walking policy's knees move at up to 21 rad/s (p99.9,
    # benchmarks/slew_limit.py) and half the no-load speed (10 rad/s at the knee) toppled it within 6 s
    target_rate_fraction=1.0,
    gantry=True,  # on its PD alone at the default pose it tips over within ~2 s
)

TASKS = task_entry_points(
    __name__,
    {
        "Sim2Real-Velocity-Flat-G1-v0": ("G1FlatEnvCfg", "G1FlatPPORunnerCfg"),
        "Sim2Real-Velocity-Rough-G1-v0": ("G1RoughEnvCfg", "G1RoughPPORunnerCfg"),
    },
)
