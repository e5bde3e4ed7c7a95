/* Native MuJoCo batch stepping for sim2real.tasks.physics_native (the native_mujoco_cpu physics preset).
 * Compiled at run time by physics_native._load_library() with the system C compiler against the mujoco wheel's
 * headers and cached by source hash; the Batch struct below must match physics_native._Batch field for field. */
#include <mujoco/mujoco.h>
#include <pthread.h>
#include <string.h>

/* Pointers into MuJoCo-Warp's host arrays (float32) and native per-thread models and scratch data. */
typedef struct {
  int nworld, nthread, nq, nv, nu, na, nbody, njmax, naconmax, efc_cols, nstep, ncon_cap, nmocap, nparam;
  mjModel** m; mjData** d;   /* one MjModel and one scratch MjData per thread */
  /* same order as _DATA_ARRAYS, _CONTACT_ARRAYS and _STAGE_ARRAYS in physics_native.py */
  float *qpos, *qvel, *qacc, *qacc_warmstart, *qfrc_applied, *xfrc_applied, *ctrl, *act, *qfrc_actuator;
  float *xpos, *xquat; int *nacon;
  float *mocap_pos, *mocap_quat;   /* per world: Newton makes a fixed-base robot's root a mocap body */
  float *c_pos, *c_frame, *c_friction, *c_dist; int *c_dim, *c_geom, *c_efc_address, *c_worldid;
  float *efc_force;
  int *ncon_world;   /* out: native contact count per world */
  int *nefc_world;   /* out: native constraint rows per world */
  /* per-world contact staging, ncon_cap slots per world */
  float *s_pos, *s_frame, *s_friction, *s_dist; int *s_dim, *s_geom, *s_efc;
  /* per-world model parameters: param_src[f] holds nworld rows of param_bytes[f] bytes, copied into the model
     field at param_dst[t * nparam + f] of thread t before that thread steps the world */
  void **param_src; int *param_bytes; void **param_dst;
} Batch;

/* worlds are handed out one at a time from a shared counter, not split into fixed shares: worlds cost unequal time
   (more contacts on random ground and boxes, which Isaac Lab lays out by env index; a fallen robot), and with fixed
   shares the thread done first waits for the others (a few per cent of stepping time, docs/native_physics.md) */
typedef struct { Batch* b; mjModel* m; mjData* d; void** dst; int* next; } Job;

/* one model per thread with each world's parameters written in before its step, rather than one model per world:
   a thousand model copies do not fit in cache, and stepping from them ran ~1.4x slower (Go2, 1024 envs) */
static void load_params(const Batch* b, void* const* dst, int w) {
  for (int f = 0; f < b->nparam; f++)
    memcpy(dst[f], (const char*)b->param_src[f] + (size_t)w * b->param_bytes[f], b->param_bytes[f]);
}

/* world w's parameters written into the fields at dst (the same copy the stepping threads do; for inspection) */
void batch_load_params(const Batch* b, void* const* dst, int w) { load_params(b, dst, w); }

static inline void f2d(double* dst, const float* src, int n) { for (int i = 0; i < n; i++) dst[i] = src[i]; }
static inline void d2f(float* dst, const double* src, int n) { for (int i = 0; i < n; i++) dst[i] = (float)src[i]; }

static void* work(void* arg) {
  Job* j = (Job*)arg; Batch* b = j->b; mjModel* m = j->m; mjData* d = j->d;
  for (int w; (w = __atomic_fetch_add(j->next, 1, __ATOMIC_RELAXED)) < b->nworld;) {
    load_params(b, j->dst, w);
    /* the whole per-world state lives in MuJoCo-Warp's arrays: load it, step, store it back */
    f2d(d->qpos, b->qpos + (size_t)w * b->nq, b->nq);
    f2d(d->qvel, b->qvel + (size_t)w * b->nv, b->nv);
    f2d(d->qacc_warmstart, b->qacc_warmstart + (size_t)w * b->nv, b->nv);
    f2d(d->qfrc_applied, b->qfrc_applied + (size_t)w * b->nv, b->nv);
    /* warp spatial_vector (force, torque) has the same 6-float layout as MuJoCo's xfrc_applied */
    f2d(d->xfrc_applied, b->xfrc_applied + (size_t)w * b->nbody * 6, b->nbody * 6);
    if (b->nu) f2d(d->ctrl, b->ctrl + (size_t)w * b->nu, b->nu);
    if (b->na) f2d(d->act, b->act + (size_t)w * b->na, b->na);
    /* each world's copy of a fixed-base robot stands at its own env origin */
    f2d(d->mocap_pos, b->mocap_pos + (size_t)w * b->nmocap * 3, b->nmocap * 3);
    f2d(d->mocap_quat, b->mocap_quat + (size_t)w * b->nmocap * 4, b->nmocap * 4);
    for (int s = 0; s < b->nstep; s++) mj_step(m, d);
    d2f(b->qpos + (size_t)w * b->nq, d->qpos, b->nq);
    d2f(b->qvel + (size_t)w * b->nv, d->qvel, b->nv);
    d2f(b->qacc + (size_t)w * b->nv, d->qacc, b->nv);
    d2f(b->qacc_warmstart + (size_t)w * b->nv, d->qacc_warmstart, b->nv);
    d2f(b->qfrc_actuator + (size_t)w * b->nv, d->qfrc_actuator, b->nv);
    if (b->na) d2f(b->act + (size_t)w * b->na, d->act, b->na);
    d2f(b->xpos + (size_t)w * b->nbody * 3, d->xpos, b->nbody * 3);
    d2f(b->xquat + (size_t)w * b->nbody * 4, d->xquat, b->nbody * 4);
    d2f(b->efc_force + (size_t)w * b->njmax, d->efc_force, d->nefc < b->njmax ? d->nefc : b->njmax);
    b->nefc_world[w] = d->nefc;
    int n = d->ncon < b->ncon_cap ? d->ncon : b->ncon_cap;
    b->ncon_world[w] = d->ncon;
    size_t base = (size_t)w * b->ncon_cap;
    for (int c = 0; c < n; c++) {
      mjContact* con = d->contact + c; size_t k = base + c;
      d2f(b->s_pos + 3 * k, con->pos, 3);
      d2f(b->s_frame + 9 * k, con->frame, 9);
      d2f(b->s_friction + 5 * k, con->friction, 5);
      b->s_dist[k] = (float)con->dist;
      b->s_dim[k] = con->dim;
      b->s_geom[2 * k] = con->geom[0]; b->s_geom[2 * k + 1] = con->geom[1];
      /* rows beyond the MuJoCo-Warp buffer (njmax) are not copied: report no force rather than a wrong one */
      int rows = mjMAX(2 * (con->dim - 1), con->dim);
      b->s_efc[k] = (con->efc_address >= 0 && con->efc_address + rows <= b->njmax) ? con->efc_address : -1;
    }
  }
  return 0;
}

int batch_step(Batch* b) {
  int nt = b->nthread < 1 ? 1 : (b->nthread > 64 ? 64 : b->nthread);
  if (nt > b->nworld) nt = b->nworld;
  pthread_t th[64]; Job jobs[64];
  int next = 0;
  for (int t = 0; t < nt; t++) {
    jobs[t].b = b; jobs[t].m = b->m[t]; jobs[t].d = b->d[t]; jobs[t].dst = b->param_dst + (size_t)t * b->nparam;
    jobs[t].next = &next;
    if (t > 0) pthread_create(&th[t], 0, work, &jobs[t]);
  }
  work(&jobs[0]);
  for (int t = 1; t < nt; t++) pthread_join(th[t], 0);
  /* pack the contacts of all worlds into one list tagged with worldid, as MuJoCo-Warp does */
  int n = 0, dropped = 0;
  for (int w = 0; w < b->nworld; w++) {
    int nw = b->ncon_world[w] < b->ncon_cap ? b->ncon_world[w] : b->ncon_cap;
    dropped += b->ncon_world[w] - nw;
    size_t base = (size_t)w * b->ncon_cap;
    for (int c = 0; c < nw; c++) {
      if (n >= b->naconmax) { dropped++; continue; }
      size_t k = base + c;
      memcpy(b->c_pos + 3 * n, b->s_pos + 3 * k, 3 * sizeof(float));
      memcpy(b->c_frame + 9 * n, b->s_frame + 9 * k, 9 * sizeof(float));
      memcpy(b->c_friction + 5 * n, b->s_friction + 5 * k, 5 * sizeof(float));
      b->c_dist[n] = b->s_dist[k];
      b->c_dim[n] = b->s_dim[k];
      b->c_geom[2 * n] = b->s_geom[2 * k]; b->c_geom[2 * n + 1] = b->s_geom[2 * k + 1];
      b->c_worldid[n] = w;
      int a = b->s_efc[k];
      for (int e = 0; e < b->efc_cols; e++) b->c_efc_address[b->efc_cols * n + e] = a >= 0 ? a + e : -1;
      n++;
    }
  }
  b->nacon[0] = n;
  return dropped;
}
