# varext built by setuptools (tests/test_three_builders.py runs setup.py build_ext):
# the same sources and variants file as meson.build, the asm option as an option.
from dispatchkit.setuptools_ext import DispatchExtension, build_ext
from setuptools import setup

setup(
    packages=["varext"],
    package_dir={"": "src"},
    ext_modules=[DispatchExtension("varext._varext", sources=["src/varext.c"],
                                   variants=["src/varext.variants.ini"], options={"asm": "true"})],
    cmdclass={"build_ext": build_ext},
)
