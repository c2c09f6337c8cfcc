# Copyright the iokernels developers.
#
# SPDX-License-Identifier: BSD-3-Clause

from spack.package import *

try:  # Spack >= 1.0: the build systems live in the builtin package repository
    from spack_repo.builtin.build_systems.cmake import CMakePackage

    COMPILERS_ARE_DEPENDENCIES = True
except ImportError:  # Spack 0.x: spack.package has them, compilers are no dependencies
    COMPILERS_ARE_DEPENDENCIES = False

# The project's public repository is named nowhere in its own metadata
# (README.md, CMakeLists.txt's project(), python/pyproject.toml): this is a
# placeholder. Until it is set, point Spack at a clone in packages.yaml:
#   packages: {iokernels: {package_attributes: {git: "file:///path/to/iokernels"}}}
IOKERNELS_GIT_PLACEHOLDER = "https://git.example.org/iokernels/iokernels.git"


class Iokernels(CMakePackage):
    """I/O kernels of HPC applications (BTIO, E3SM, AMReX, Chombo, ...) over
    MPI-IO, PnetCDF, HDF5, NetCDF-4 and ADIOS2, with a campaign tool that runs
    sweeps and reports them."""

    homepage = IOKERNELS_GIT_PLACEHOLDER.removesuffix(".git")
    git = IOKERNELS_GIT_PLACEHOLDER

    license("BSD-3-Clause")

    # No release is tagged yet (CMakeLists.txt says 0.2.0): the branch only.
    version("main", branch="main")

    variant("pnetcdf", default=True, description="PnetCDF backend (and E3SM's map reader)")
    variant("hdf5", default=True, description="Parallel HDF5 backend")
    variant("netcdf", default=False, description="NetCDF-4 backend (parallel NetCDF-C)")
    variant("adios2", default=False, description="ADIOS2 backend (BP4/BP5)")
    variant("python", default=False, description="The campaign tool, iokernels-campaign")
    # No docs variant: the site (mkdocs.yml) needs MkDocs 1.6 (hooks, its
    # plugins), Spack's py-mkdocs is 1.3.1. The man pages are always installed.

    # The NetCDF-4 backend calls HDF5 itself (cmake/backends.cmake)
    conflicts("+netcdf", when="~hdf5", msg="the NetCDF-4 backend needs +hdf5")

    if COMPILERS_ARE_DEPENDENCIES:
        depends_on("c", type="build")
    depends_on("cmake@3.18:", type="build")
    depends_on("pkgconfig", type="build")
    depends_on("mpi")
    depends_on("jansson")
    depends_on("parallel-netcdf", when="+pnetcdf")
    depends_on("hdf5+mpi", when="+hdf5")
    depends_on("netcdf-c+mpi", when="+netcdf")
    depends_on("adios2+mpi", when="+adios2")

    with when("+python"):
        extends("python")
        depends_on("python@3.11:", type=("build", "run"))
        depends_on("py-pip", type="build")
        depends_on("py-setuptools@61:", type="build")
        depends_on("py-numpy@1.24:", type=("build", "run"))
        depends_on("py-matplotlib@3.7:", type=("build", "run"))
        depends_on("py-jinja2@3.1:", type=("build", "run"))
        depends_on("py-pandas@2:", type=("build", "run"))

    def cmake_args(self):
        spec = self.spec
        # Each backend ON (the configure fails if its library is not usable)
        # or OFF, never the build's default AUTO: the variant decides.
        args = [
            self.define("MPI_C_COMPILER", spec["mpi"].mpicc),
            self.define_from_variant("IOK_BACKEND_PNETCDF", "pnetcdf"),
            self.define_from_variant("IOK_BACKEND_HDF5", "hdf5"),
            self.define_from_variant("IOK_BACKEND_NETCDF4", "netcdf"),
            self.define_from_variant("IOK_BACKEND_ADIOS2", "adios2"),
        ]
        if spec.satisfies("+pnetcdf"):
            args.append(self.define("PnetCDF_ROOT", spec["parallel-netcdf"].prefix))
        if spec.satisfies("+hdf5"):
            args.append(self.define("HDF5_ROOT", spec["hdf5"].prefix))
        if spec.satisfies("+netcdf"):
            args.append(self.define("netCDF_ROOT", spec["netcdf-c"].prefix))
        if spec.satisfies("+adios2"):
            args.append(self.define("ADIOS2_ROOT", spec["adios2"].prefix))
        return args

    @run_after("install", when="+python")
    def install_campaign_tool(self):
        # CMake installs the package's sources in share/iokernels/python
        source = join_path(self.prefix.share.iokernels, "python")
        pip = ["-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index"]
        self.spec["python"].command(*pip, f"--prefix={self.prefix}", source)
