"""Collision detection (MuJoCo's engine_collision_*): one module per concern.

- `contact`: the contact rows colliders write (``put``) and MuJoCo's frame completion (``make_frame``).
- `params`: contact parameters mixed per candidate pair on the host (mj_contactParam), at put_model.
- `broadphase`: which candidate pairs reach a collider this step (bounding spheres with margin and gap).
- `primitive`: analytic plane, sphere, capsule and cylinder pairs (engine_collision_primitive.c).
- `box`: sphere-box, capsule-box and box-box (engine_collision_box.c).
- `support`, `gjk`, `epa`: native GJK/EPA for convex pairs (the shapes' support functions and the scratch
  layout; the distance and overlap search and the collider `convex`; the penetration polytope).
- `multicontact`, `polygon_clip`: MuJoCo 4.0.0's extra contacts of convex pairs and mesh pairs without a
  sphere or ellipsoid (the touching faces and edges, one clipped by the other).
- `mesh`: plane-mesh, the mesh support GJK/EPA uses for a mesh against a convex geom or a mesh, and what the
  multi-contact reads of a mesh (its polygons at a vertex, edge or face; the edges leaving a vertex).
  `hfield`: height fields (prisms through GJK/EPA; `gjk_pair` serves them, convex and mesh pairs).
- `driver`: per env, every candidate pair through the broadphase to its collider; the contact rows.
- `kernel`: the collision kernel, compiled with the colliders a scene's pairs use.

A collider is a ti.func ``(d, b, n0, cap, pos1, mat1, size1, pos2, mat2, size2, margin) -> count``: it
writes its contacts to rows ``n0 ..`` of env ``b``'s contact buffer with `contact.put` (rows at or past
``cap`` are counted, not written) and returns how many it found; geom 1 is the geom of the lower type, as
MuJoCo orders a pair. Positions are 3-vectors, rotation matrices row-major 9-vectors, sizes 3-vectors.
"""
