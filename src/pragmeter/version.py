"""The package's version, in a module of its own so that modules inside the package read it without importing the
package's top level (which names the lazy public classes)."""

__version__ = "0.1.0"
