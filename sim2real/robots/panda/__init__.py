"""Franka Emika Panda arm with hand (MJCF from google-deepmind/mujoco_menagerie, Apache-2.0).

Fixed base: ``base_body`` is the bolted ``link0`` and there are no feet. ``joint_names`` are the seven arm joints
the policy commands; the two finger joints (``gripper_joints``) get their own actuator group: held open at their
default during reach, driven by one open/close action in lift.

PD gains are the joint-impedance gains of libfranka's ``joint_impedance_control`` example (the gains a real Panda
runs under a joint-impedance controller), scaled up on the shoulder so that the PD alone, without the gravity
compensation the real robot adds internally, holds the stretched arm within ~0.05 rad of its target. Effort and
velocity limits are Franka's datasheet values (87 / 12 N m, 2.175 / 2.61 rad/s), which match the MJCF's
``forcerange``.
"""

from sim2real.robots.spec import JointGroup, RobotSpec, task_entry_points

SPEC = RobotSpec(
    name="panda",
    mjcf="panda.xml",
    usd="usd/panda.usdc",
    joint_names=tuple(f"joint{i}" for i in range(1, 8)),
    # the MJCF's "home" keyframe: elbow bent, hand pointing down, fingers open
    default_joint_pos={
        "joint[1-3]": 0.0,
        "joint4": -1.57079,
        "joint5": 0.0,
        "joint6": 1.57079,
        "joint7": -0.7853,
        "finger_joint[12]": 0.04,
    },
    joint_groups=(
        JointGroup("joint[1-4]", stiffness=600.0, damping=15.0, effort_limit=87.0, velocity_limit=2.175),
        JointGroup("joint[5-6]", stiffness=250.0, damping=10.0, effort_limit=12.0, velocity_limit=2.61),
        JointGroup("joint7", stiffness=50.0, damping=5.0, effort_limit=12.0, velocity_limit=2.61),
        # fingers: Franka Hand continuous force 70 N, 0.05 m/s per finger (prismatic: N, m/s)
        JointGroup("finger_joint[12]", stiffness=400.0, damping=10.0, effort_limit=70.0, velocity_limit=0.05),
    ),
    base_body="link0",
    floating_base=False,
    foot_bodies=(),
    init_base_height=0.0,
    ee_body="hand",
    gripper_joints=("finger_joint1", "finger_joint2"),
    gripper_closed=0.0,
    finger_bodies=("left_finger", "right_finger"),
    # fingertip pads: finger body 0.0584 m below the hand, pad centres 0.045 m further (the MJCF's pad geoms)
    grasp_offset=(0.0, 0.0, 0.1034),
)

TASKS = task_entry_points(
    __name__,
    {
        "Sim2Real-Reach-Panda-v0": ("PandaReachEnvCfg", "PandaReachPPORunnerCfg"),
        "Sim2Real-Lift-Panda-v0": ("PandaLiftEnvCfg", "PandaLiftPPORunnerCfg"),
    },
)
