; Definitions for Ruby. See python.scm for the capture conventions.

(module
  name: [(constant) (scope_resolution)] @name) @definition.module

(class
  name: [(constant) (scope_resolution)] @name) @definition.class

(method
  name: (_) @name) @definition.function

(singleton_method
  name: (_) @name) @definition.method

(assignment
  left: (constant) @name) @definition.constant
