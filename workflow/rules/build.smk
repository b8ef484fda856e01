# One kernel build per MPI entry, with that entry's mpicc. Rules are generated per entry because
# `envmodules:` is static per rule and each entry names its own site modules. Besides its mpicc,
# the build gets the environment its entry's install needs (mpiguide.campaign.installs).

from mpiguide.campaign.installs import build_env_prefix

from mpiguide.core.paths import BUILD_TREE, LOGS_TREE

for build_mpi, build_entry in BUILT_MPI.items():

    rule:
        name:
            f"build_{build_mpi}"
        input:
            KERNEL_SOURCES,
        output:
            kernel_binary(build_mpi),
        log:
            f"{RESULTS}/{LOGS_TREE}/{BUILD_TREE}/{build_mpi}.log",
        conda:
            kernel_conda_env(build_mpi)
        envmodules:
            *build_entry["modules"],
        params:
            env=build_env_prefix(build_entry),
            mpicc=build_entry["mpicc"],
            builddir=output_dir,
        # make runs in the kernel's sources (KERNEL_DIR: src/kernel of this checkout, relative
        # to the working directory): BUILD must be absolute, but built at run time so that moving
        # the project does not change params and trigger a rebuild. MPICC goes in the
        # environment, where make never expands it (src/kernel/Makefile).
        shell:
            f"{{params.env}} MPICC={{params.mpicc:q}} make -C {shlex.quote(KERNEL_DIR)}"
            ' BUILD="$PWD"/{params.builddir:q} > {log:q} 2>&1'
