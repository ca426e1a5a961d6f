# strata's layering, written once (shared/DESIGN.md, Data path):
#
#   agent / sampler -> format -> import -> store -> analysis -> report / export -> cli
#
# Read by both checks in cmake/StrataLayering.cmake: the link graph of every
# target under src/ at configure time, and the #include lines of every file
# under src/ (ctest layering.includes).
#
# A module is a folder under src/; a file or target belongs to the deepest
# listed folder that holds it (src/import/cpu/x.cc is import_cpu,
# src/agent/kernels/y.cc is agent). A folder not in this list fails the link
# check: a new library gets its line here. A listed folder that does not exist
# (yet, or any more) is skipped.
#
# strata_layer(<module> DIR <folder under src/> USES <modules> NEVER <modules>)
#   USES: the modules it may depend on, together with everything those may
#         use in turn (a layer may use all the layers below it).
#   NEVER: what the layering forbids it; the rule list itself is rejected
#         when USES reaches one of them, so an edit here cannot quietly
#         break DESIGN.md.
# strata_layer_target(<target> USES <modules> FILES <its sources under src/>):
#   a target held to less than its folder's rule, on the link graph and, for
#   FILES, on includes (headers of its own folder stay allowed). A listed
#   target or file that does not exist is skipped.
# strata_layer_exception(<file under src/> <included header> <why>): a known
#   include that breaks the rule and is being removed; say by what.

# The bottom: strings, processes, the clock, results. Every module may use it.
strata_layer(common DIR common
  USES
  NEVER format agent sampler sampler_inprocess symbolize store import import_cpu analysis
        report export cli)

# The spool wire format. Linked into the agent and the preloaded sampler, so
# it pulls in nothing but common (no sqlite or fmt in the profiled process).
strata_layer(format DIR format
  USES common
  NEVER agent sampler sampler_inprocess symbolize store import import_cpu analysis report
        export cli)

# Runs inside the profiled process (strata_agent, strata_agent_core,
# strata_instrument): the wire format and common only.
strata_layer(agent DIR agent
  USES format
  NEVER sampler sampler_inprocess symbolize store import import_cpu analysis report export
        cli)

# perf_event sampling of a child (strata_sampler) and unwinding/symbols
# (strata_symbolize): producers below the store, which know nothing of it.
strata_layer(sampler DIR sampler
  USES common format
  NEVER agent store import import_cpu analysis report export cli)
strata_layer(symbolize DIR symbolize
  USES common format
  NEVER agent store import import_cpu analysis report export cli)

# The in-process sampler's CLI side (strata_sampler_inprocess): runs the
# target with the preload library and reads what it wrote. A sampler: below
# the store and the import layer.
strata_layer(sampler_inprocess DIR sampler/inprocess
  USES sampler format
  NEVER agent store import import_cpu analysis report export cli)
# libstrata_sigprof.so is preloaded into the profiled process: like the agent
# (its folder's own headers aside).
strata_layer_target(strata_sigprof USES format FILES sampler/inprocess/sigprof_preload.cc)

# The trace database. Import writes it and analysis reads it, so it never
# depends on either, nor on what sits above them.
strata_layer(store DIR store
  USES common format sampler symbolize
  NEVER agent import import_cpu analysis report export cli)

# Spools -> store (strata_import) and raw CPU samples -> profile
# (strata_import_cpu): one layer in two folders, each may use the other. It
# may use analysis for its types; it never reaches report, export or cli
# (they sit above it) nor the agent's code (it reads what the agent wrote).
strata_layer(import DIR import
  USES store analysis sampler_inprocess symbolize import_cpu
  NEVER agent report export cli)
strata_layer(import_cpu DIR import/cpu
  USES store analysis sampler_inprocess symbolize import
  NEVER agent report export cli)

# Pure functions over the trace: never the import layer (it reads the store,
# not spools), never what presents its results.
strata_layer(analysis DIR analysis
  USES store sampler sampler_inprocess symbolize format common
  NEVER agent import import_cpu report export cli)

# Reports and exports read analysis results, not spools (no import), and
# never each other: each stands alone under the cli.
strata_layer(report DIR report
  USES analysis
  NEVER agent import import_cpu export cli)
strata_layer(export DIR export
  USES analysis
  NEVER agent import import_cpu report cli)

# The offline HTML report (strata_html): one page that shows report tables
# and export's timeline together, so it sits above both and below the cli.
strata_layer(html DIR html
  USES report export analysis
  NEVER agent import import_cpu cli)

# Flag parsing and wiring (strata_cli and the strata executable): may use
# every library but the agent's code, which it only loads at run time (the
# .so's path, never its headers or objects).
strata_layer(cli DIR cli
  USES html report export import import_cpu analysis store sampler sampler_inprocess symbolize
       format common
  NEVER agent)

# Known breaks, each with what removes it. (None: issue 17 moved the
# instrument chunk kinds to src/format and the scanner out of src/cli.)
