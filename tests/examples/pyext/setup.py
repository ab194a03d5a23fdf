# pyext built by setuptools (builders/setuptools.toml as its pyproject.toml):
# the same sources as meson.build, through the toolkit's build_ext.
from dispatchkit.setuptools_ext import DispatchExtension, build_ext
from setuptools import setup

setup(
    packages=["pyext"],
    package_dir={"": "src"},
    ext_modules=[DispatchExtension("pyext._pyext", sources=["src/_pyext.c"],
                                   dispatch=["src/sum.dispatch.c", "src/scale.dispatch.cpp"])],
    cmdclass={"build_ext": build_ext},
)
