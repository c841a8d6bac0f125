; Definitions for Zig. See python.scm for the capture conventions.
; A type in Zig is a value: `const Parser = struct { ... };` names a struct, and a
; function inside it is a method. `const std = @import("std");` and other constants
; are not symbols (most are imports or aliases).

(Decl
  (FnProto
    function: (IDENTIFIER) @name)) @definition.function

(VarDecl
  variable_type_function: (IDENTIFIER) @name
  (ErrorUnionExpr
    (SuffixExpr
      (ContainerDecl
        (ContainerDeclType ["struct" "union" "opaque"]))))) @definition.struct

(VarDecl
  variable_type_function: (IDENTIFIER) @name
  (ErrorUnionExpr
    (SuffixExpr
      (ContainerDecl
        (ContainerDeclType "enum"))))) @definition.enum

(VarDecl
  variable_type_function: (IDENTIFIER) @name
  (ErrorUnionExpr
    (SuffixExpr
      (ErrorSetDecl)))) @definition.type
