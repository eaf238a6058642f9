"""`rigidsim compare`: a scene run by rigidsim and by MuJoCo from the same state, compared stage by stage.

`model` copies a MuJoCo compile into our `Model` and compares two Models field by field; `stages` runs both
engines and measures each stage's error; `report` renders the stage table and the verdict. MuJoCo is an
optional dependency (``pip install 'rigidsim[mujoco]'``): every module imports it inside its functions.
"""
