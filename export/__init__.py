"""Self-describing ONNX export (``sim2real.export``): ``metadata`` (no torch) and ``onnx_export`` (torch).

The robot side (reader, observation terms, actuator models, sim-to-sim) is ``sim2real_deploy``.
"""
