// A shared library shaped like a CPython extension module, without Python's
// headers: the structs below have the layouts python_methods.h reads
// (PyMethodDef, PyModuleDef, a static PyTypeObject, a PyType_Spec), so the
// scan is tested the same on every machine, Python installed or not.
#include <stddef.h>

typedef struct {
  const char* ml_name;
  void* ml_meth;
  int ml_flags;
  const char* ml_doc;
} MethodDef;

typedef struct {
  long ob_refcnt;
  void* ob_type;
  void* m_init;
  long m_index;
  void* m_copy;
  const char* m_name;  // +40
  const char* m_doc;
  long m_size;
  MethodDef* m_methods;  // +64
  void* rest[4];
} ModuleDef;

typedef struct {
  long ob_refcnt;
  void* ob_type;
  long ob_size;
  const char* tp_name;  // +24
  long tp_basicsize;    // +32
  char unread[232 - 40];
  MethodDef* tp_methods;  // +232
  char tail[160];
} TypeObject;

typedef struct {
  int slot;
  void* pfunc;
} Slot;

typedef struct {
  const char* name;
  int basicsize;
  int itemsize;
  unsigned flags;
  Slot* slots;  // +24
} Spec;

#define FN(name) \
  __attribute__((noinline)) static void* name(void* self, void* args) { return args ? self : 0; }
FN(fake_sorted)
FN(fake_len)
FN(fake_join)
FN(fake_push)
FN(fake_helper)  // in no table

// A clinic-style wrapper that only tail-calls an exported function: -fPIC
// makes that `jmp PyFake_Join@plt`, as unicode_join is `jmp PyUnicode_Join@plt`.
__attribute__((noinline)) void* PyFake_Join(void* self, void* args) {
  return args ? args : self;
}
__attribute__((noinline)) static void* fake_join_wrapper(void* self, void* args) {
  return PyFake_Join(self, args);
}

static MethodDef module_methods[] = {
    {"sorted", (void*)fake_sorted, 0x82, "sorted(iterable)"},
    {"len", (void*)fake_len, 0x8, NULL},
    {"join", (void*)fake_join_wrapper, 0x8, NULL},
    {NULL, NULL, 0, NULL},
};
static ModuleDef module = {1, NULL, NULL, 0, NULL, "fakemod", NULL, -1, module_methods, {0}};

static MethodDef type_methods[] = {{"join", (void*)fake_join, 0x8, NULL}, {NULL, NULL, 0, NULL}};
static TypeObject type = {1, NULL, 0, "faketype", 48, {0}, type_methods, {0}};

static MethodDef spec_methods[] = {{"push", (void*)fake_push, 0x8, NULL}, {NULL, NULL, 0, NULL}};
static Slot spec_slots[] = {{67 /* Py_tp_doc */, (void*)"a stack"},
                            {64 /* Py_tp_methods */, spec_methods},
                            {0, NULL}};
static Spec spec = {"fakemod.Stack", 32, 0, 0, spec_slots};

// An exported Py* symbol, as every extension has (PyInit_NAME): it marks the
// file as one that uses the Python C API. It also keeps the structs alive.
void* PyInit_fakemod(int which) {
  void* all[] = {&module, &type, &spec, (void*)fake_helper};
  return all[which & 3];
}
