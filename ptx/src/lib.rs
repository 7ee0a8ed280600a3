//! PTX lexer and module parser for jitseam.
