"""MuJoCo's constraint model: the rows of every equality, friction loss, limit and contact (`instantiate`), their
soft-constraint parameters (`impedance`), the stage that runs them in the forward pass (`stage`) and its
kernels (`kernel`). The solver is `rigidsim.engine.solver`."""
