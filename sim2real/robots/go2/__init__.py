"""Unitree Go2 quadruped (MJCF from unitreerobotics/unitree_mujoco, BSD-3-Clause)."""

from sim2real.robots.spec import JointGroup, Mirror, PassiveDynamics, RobotSpec, task_entry_points

_LEGS = ("FL", "FR", "RL", "RR")
# Passive joint dynamics: the MJCF's 0.1 / 0.2 / 0.01 the median of each range (damping and armature log-uniform;
# sources in docs/domain_randomization.md)
# Unitree's leg naming: left and right legs swap; the hips abduct about x, so they turn the other way in the mirror
MIRROR = Mirror(pairs=(("FL", "FR"), ("RL", "RR")), negated=r".*_hip_joint")
_PASSIVE = PassiveDynamics(damping=(0.02, 0.5), friction=(0.0, 0.4), armature=(0.005, 0.02))

SPEC = RobotSpec(
    name="go2",
    mjcf="go2.xml",
    usd="usd/go2.usdc",
    # Isaac Lab's articulation order (leg-major, hip/thigh/calf); the MJCF actuators are FR, FL, RR, RL.
    joint_names=tuple(f"{leg}_{part}_joint" for leg in _LEGS for part in ("hip", "thigh", "calf")),
    default_joint_pos={
        "[FR]L_hip_joint": 0.1,
        "[FR]R_hip_joint": -0.1,
        "F[LR]_thigh_joint": 0.8,
        "R[LR]_thigh_joint": 1.0,  # rear thighs further back: a higher, more stable stance
        ".*_calf_joint": -1.5,
    },
    # PD gains of Isaac Lab's and unitree_rl_gym's Go2 (Kp 25, Kd 0.5); effort limits from the MJCF motors
    # (23.7 / 45.43 N m); no-load speeds from Unitree's Go2 motor data (30.1 / 15.7 rad/s).
    joint_groups=(
        JointGroup(
            ".*_(hip|thigh)_joint",
            stiffness=25.0,
            damping=0.5,
            effort_limit=23.7,
            velocity_limit=30.1,
            passive=_PASSIVE,
        ),
        JointGroup(
            ".*_calf_joint", stiffness=25.0, damping=0.5, effort_limit=45.43, velocity_limit=15.7, passive=_PASSIVE
        ),
    ),
    base_body="base_link",
    foot_bodies=tuple(f"{leg}_calf" for leg in _LEGS),
    foot_frames=tuple(f"{leg}_foot" for leg in _LEGS),
    sole_offset=0.022,  # the foot spheres' radius
    init_base_height=0.35,
    undesired_contact_bodies=("base_link", *(f"{leg}_thigh" for leg in _LEGS), *(f"{leg}_hip" for leg in _LEGS)),
    mirror=MIRROR,
)

TASKS = task_entry_points(
    __name__,
    {
        "Sim2Real-Velocity-Flat-Go2-v0": ("Go2FlatEnvCfg", "Go2FlatPPORunnerCfg"),
        "Sim2Real-Velocity-Rough-Go2-v0": ("Go2RoughEnvCfg", "Go2RoughPPORunnerCfg"),
    },
)
