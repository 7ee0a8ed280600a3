//! The resolver and the typed instruction model: scopes, ranges, vector registers, parameters,
//! what each instruction writes (in order) and reads, and what the model does not know.

use jitseam_ptx::inst::{AddrBase, Flag, Name, Opcode, Operand, RegId, Space, Special, VarRef};
use jitseam_ptx::resolve::{Body, ResolvedEntry, ResolvedModule, Stmt};
use jitseam_ptx::{ParseErrorKind, ScalarType};

fn module(body: &str) -> String {
    format!(
        ".version 8.8\n.target sm_80\n.address_size 64\n\
         .global .u32 table[4];\n\
         .func (.param .b32 r) f(.param .b32 a, .reg .b32 b)\n{{\n\tst.param.b32 [r], b;\n\tret;\n}}\n\
         .visible .entry k(.param .u64 k_p0, .param .u32 k_p1)\n{{\n{body}\n}}\n"
    )
}

fn resolve(body: &str) -> Result<(ResolvedModule, ResolvedEntry), jitseam_ptx::ParseError> {
    let src = module(body);
    let resolved = ResolvedModule::new(&src)?;
    let entry = resolved.entry(&src, "k")?;
    Ok((resolved, entry))
}

fn entry_body(body: &str) -> Body {
    let (_, entry) = resolve(body).unwrap_or_else(|e| panic!("{e}"));
    entry.bodies.into_iter().next().expect("an entry body")
}

fn reg(body: &Body, name: &str) -> RegId {
    let i = body
        .regs
        .iter()
        .position(|r| r.name == name)
        .unwrap_or_else(|| panic!("no register {name}"));
    RegId(i as u32)
}

fn instructions(body: &Body) -> Vec<&jitseam_ptx::inst::Instruction> {
    body.instructions().collect()
}

#[test]
fn a_name_declared_in_a_block_stops_naming_it_when_the_block_closes() {
    let body = entry_body(".reg .b32 %x;\n{\n.reg .b32 %x;\nmov.u32 %x, 1;\n}\nmov.u32 %x, 2;\n");
    let ins = instructions(&body);
    let inner = ins[0].defs()[0];
    let outer = ins[1].defs()[0];
    assert_ne!(inner, outer, "the block's %x is another register");
    assert_eq!(
        outer,
        RegId(0),
        "after the block, %x is the outer one again"
    );
    // A name declared only inside a block is undeclared after it.
    let err = resolve("{\n.reg .b32 %y;\n}\nmov.u32 %y, 2;\n").unwrap_err();
    assert!(matches!(err.kind, ParseErrorKind::Undeclared { ref name } if name == "%y"));
}

#[test]
fn shared_variables_of_a_closed_block_are_not_named_after_it() {
    let src = "{\n.shared .align 4 .b8 s[8];\nst.shared.u32 [s], 1;\n}\n{\n.shared .align 4 .b8 s[64];\nst.shared.u32 [s+60], 1;\n}\n";
    let body = entry_body(src);
    let ins = instructions(&body);
    let base = |i: usize| match &ins[i].operands[0] {
        Operand::Address {
            base: AddrBase::Name(Name::Var(VarRef::Body(v))),
            ..
        } => *v,
        other => panic!("{other:?}"),
    };
    assert_ne!(base(0), base(1), "each block's `s` is its own variable");
    assert_eq!(body.vars[base(1) as usize].size_bytes(), Some(64));
}

#[test]
fn ranges_name_each_member_without_leading_zeros() {
    let body = entry_body(".reg .b32 %r<12>;\nmov.u32 %r11, %r0;\n");
    let ins = instructions(&body);
    assert_eq!(ins[0].defs(), &[reg(&body, "%r11")]);
    assert_eq!(ins[0].uses(), &[reg(&body, "%r0")]);
    assert!(
        resolve(".reg .b32 %r<12>;\nmov.u32 %r12, 1;\n").is_err(),
        "past the range"
    );
    assert!(
        resolve(".reg .b32 %r<12>;\nmov.u32 %r01, 1;\n").is_err(),
        "a leading zero"
    );
}

#[test]
fn vector_registers_are_one_register_per_component() {
    let body = entry_body(
        ".reg .v4 .f32 %v;\n.reg .b64 %a;\nld.global.v4.f32 %v, [%a];\nmov.f32 %v.y, 0f00000000;\n",
    );
    let ins = instructions(&body);
    let x = reg(&body, "%v.x");
    let w = reg(&body, "%v.w");
    assert_eq!(ins[0].defs().len(), 4);
    assert_eq!(ins[0].defs()[0], x);
    assert_eq!(ins[0].defs()[3], w);
    assert_eq!(ins[0].uses(), &[reg(&body, "%a")]);
    assert_eq!(ins[1].defs(), &[reg(&body, "%v.y")]);
}

#[test]
fn defs_are_in_write_order() {
    let body = entry_body(
        ".reg .pred %p, %q;\n.reg .b32 %a, %b;\n.reg .b64 %rd;\n\
         setp.lt.and.s32 %p|%q, %a, %b, %p;\n\
         setp.eq.s32 %p|%p, %a, %b;\n\
         ld.param.v2.u32 {%a, %b}, [k_p0];\n\
         ld.param.v2.u32 {%b, _}, [k_p0];\n\
         st.global.u32 [%rd+4], %a;\n\
         @%q bra $L;\n$L:\nret;\n",
    );
    let ins = instructions(&body);
    let (p, q, a, b, rd) = (
        reg(&body, "%p"),
        reg(&body, "%q"),
        reg(&body, "%a"),
        reg(&body, "%b"),
        reg(&body, "%rd"),
    );
    assert_eq!(ins[0].defs(), &[p, q]);
    assert_eq!(ins[0].uses(), &[a, b, p], "the combining predicate is read");
    assert_eq!(ins[1].defs(), &[p, p], "both writes, the second last");
    assert_eq!(
        ins[2].defs(),
        &[a, b],
        "a vector load of a parameter writes every register"
    );
    assert!(ins[2].uses().is_empty());
    assert_eq!(ins[3].defs(), &[b], "the sink is written nowhere");
    assert!(ins[4].defs().is_empty(), "a store writes no register");
    assert_eq!(ins[4].uses(), &[rd, a]);
    assert_eq!(ins[5].uses(), &[q], "the guard is read");
    assert_eq!(ins[5].operands[0], Operand::Name(Name::Label(0)));
}

#[test]
fn parameters_and_variables_are_names_not_registers() {
    let body = entry_body(
        ".reg .b64 %rd;\n.reg .b32 %r;\n\
         mov.u64 %rd, k_p0;\n\
         ld.param.u64 %rd, [%rd];\n\
         mov.u64 %rd, table;\n\
         ld.global.u32 %r, [table+4];\n\
         {\n.param .b32 arg;\n.param .b32 ret;\nst.param.b32 [arg], %r;\ncall (ret), f, (arg, %r);\nld.param.b32 %r, [ret];\n}\n",
    );
    let ins = instructions(&body);
    assert_eq!(
        ins[0].operands[1],
        Operand::Name(Name::Param(0)),
        "the parameter's address"
    );
    assert_eq!(ins[0].uses(), &[] as &[RegId]);
    assert!(matches!(
        ins[1].operands[1],
        Operand::Address {
            base: AddrBase::Reg(_),
            ..
        }
    ));
    assert_eq!(ins[1].mods.space, Some(Space::Param));
    assert_eq!(
        ins[2].operands[1],
        Operand::Name(Name::Var(VarRef::Module(0)))
    );
    assert!(matches!(
        ins[3].operands[1],
        Operand::Address {
            base: AddrBase::Name(Name::Var(VarRef::Module(0))),
            offset: 4
        }
    ));
    assert_eq!(ins[5].opcode, Opcode::Call);
    assert_eq!(ins[5].operands[1], Operand::Name(Name::Func(0)));
    assert_eq!(body.callees, vec![0]);
    assert!(body.statements.iter().any(|s| matches!(s, Stmt::Param(_))));
}

#[test]
fn a_called_function_is_resolved_with_its_register_parameters() {
    let (resolved, entry) = resolve(
        ".reg .b32 %r;\n{\n.param .b32 ret;\n.param .b32 arg;\ncall (ret), f, (arg, %r);\n}\n",
    )
    .unwrap();
    assert_eq!(entry.bodies.len(), 2);
    let f = entry.func_body(0).expect("f's body");
    let b = reg(f, "b");
    let store = f.instructions().next().unwrap();
    assert_eq!(
        store.uses(),
        &[b],
        "a .reg parameter is a register of the function"
    );
    assert!(matches!(
        store.operands[0],
        Operand::Address {
            base: AddrBase::Name(Name::Return(0)),
            offset: 0
        }
    ));
    assert_eq!(entry.call_depth(&resolved.module), Ok(1));
}

#[test]
fn recursion_is_found_in_the_call_graph() {
    let src = ".version 8.8\n.target sm_80\n.address_size 64\n\
               .func g()\n{\ncall h, ();\nret;\n}\n\
               .func h()\n{\ncall g, ();\nret;\n}\n\
               .entry k()\n{\ncall g, ();\nret;\n}\n";
    let resolved = ResolvedModule::new(src).unwrap();
    let entry = resolved.entry(src, "k").unwrap();
    let recursion = entry.call_depth(&resolved.module).unwrap_err();
    assert!(
        recursion.name == "g" || recursion.name == "h",
        "{recursion}"
    );
}

#[test]
fn special_registers_and_their_components() {
    let body = entry_body(
        ".reg .b32 %r;\nmov.u32 %r, %tid.y;\nmov.u32 %r, %laneid;\nmov.u32 %r, WARP_SZ;\n",
    );
    let ins = instructions(&body);
    assert_eq!(ins[0].operands[1], Operand::Special(Special::Tid(1)));
    assert_eq!(ins[1].operands[1], Operand::Special(Special::Laneid));
    assert_eq!(ins[2].operands[1], Operand::Special(Special::WarpSz));
    assert!(resolve(".reg .b32 %r;\nmov.u32 %r, %tid.w;\n").is_err());
    assert!(resolve(".reg .b32 %r;\nmov.u32 %r, %nosuch;\n").is_err());
}

#[test]
fn modifiers_are_typed_and_unknown_ones_are_kept() {
    let body = entry_body(
        ".reg .b32 %a, %b, %c;\n.reg .pred %p;\n\
         mul.hi.u32 %a, %b, %c;\n\
         setp.hi.u32 %p, %a, %b;\n\
         add.cc.u32 %a, %b, %c;\n\
         addc.u32 %a, %b, %c;\n\
         min.relu.s32 %a, %b, %c;\n\
         add.frobnicate.u32 %a, %b, %c;\n\
         frob.u32 %a, %b;\n",
    );
    let ins = instructions(&body);
    assert!(ins[0].mods.has(Flag::Hi));
    assert_eq!(ins[0].mods.cmp, None);
    assert_eq!(ins[1].mods.cmp, Some(jitseam_ptx::inst::Compare::Hi));
    assert!(!ins[1].mods.has(Flag::Hi));
    assert!(ins[2].carry().writes && !ins[2].carry().reads);
    assert!(ins[3].carry().reads && !ins[3].carry().writes);
    assert!(ins[4].mods.has(Flag::Relu));
    assert!(
        !ins[4].mods.flags_within(&[]),
        "a reader that takes no flag sees .relu"
    );
    assert_eq!(ins[0].mods.types, vec![ScalarType::U32]);
    let unknown = ins[5].unknown().expect("an unknown modifier");
    assert!(unknown.to_string().contains("`.frobnicate`"), "{unknown}");
    let unknown = ins[6].unknown().expect("an unknown opcode");
    assert_eq!(ins[6].opcode, Opcode::Unknown);
    assert!(unknown.to_string().contains("`frob`"), "{unknown}");
    assert!(ins[0].unknown().is_none());
}

#[test]
fn labels_are_known_before_their_branch_and_are_unique() {
    let body = entry_body("bra $L;\n$L:\nret;\n");
    assert_eq!(body.labels.len(), 1);
    assert!(resolve("$L:\n$L:\nret;\n").is_err());
    assert!(resolve("bra $Nowhere;\n").is_err());
}

#[test]
fn a_destination_that_cannot_be_written_is_refused() {
    for body in [
        ".reg .b64 %a;\n.reg .f64 %f;\nld.global.f64 %tid.x, [%a];\n",
        ".reg .b32 %r;\nmov.u32 7, %r;\n",
        ".reg .b32 %r;\nadd.u32 k_p1, %r, 1;\n",
        ".reg .pred %p;\n.reg .b32 %r;\nsetp.eq.u32 !%p, %r, 1;\n",
    ] {
        let err = resolve(body).unwrap_err();
        assert!(
            matches!(err.kind, ParseErrorKind::InvalidInstruction { .. }),
            "{body}: {err}"
        );
    }
    // Where operand 0 is a source, it may be anything a source may be.
    entry_body("bar.sync 0;\n.reg .b32 %r;\nnanosleep.u32 %r;\n");
}

#[test]
fn an_instruction_knows_its_written_opcode_and_position() {
    let src = module(
        ".reg .pred %p;\n.reg .b32 %r;\n  @!%p add.cc.u32 %r, %r, 1;\n\tret;\n.reg .b64 %rd;\n",
    );
    let resolved = ResolvedModule::new(&src).unwrap();
    let entry = resolved.entry(&src, "k").unwrap();
    let body = &entry.bodies[0];
    let ins = instructions(body);
    assert_eq!(
        ins[0].opcode_text(),
        "add.cc.u32",
        "the guard is not part of it"
    );
    assert_eq!(ins[1].opcode_text(), "ret", "nor the `;`");
    let add_line = src.lines().position(|l| l.contains("add.cc")).unwrap() as u32 + 1;
    assert_eq!(ins[0].line, add_line);
    assert_eq!(
        ins[0].col, 3,
        "the guard starts the instruction, after two spaces"
    );
    assert_eq!(ins[1].col, 2, "a tab is one column");
    // A declaration the model keeps by offset has its line from the module.
    let table = &resolved.vars[0];
    let table_line = src
        .lines()
        .position(|l| l.contains(".global .u32 table"))
        .unwrap() as u32
        + 1;
    assert_eq!(resolved.line(table.offset), table_line);
    assert_eq!(
        resolved.line(src.len() + 10),
        resolved.line(src.len()),
        "past the end is the last line"
    );
}

#[test]
fn texture_geometries_are_known_modifiers() {
    let body = entry_body(
        ".reg .f32 %t<4>;\n.reg .s32 %x, %y;\n\
         tex.2d.v4.f32.s32 {%t0, %t1, %t2, %t3}, [table, {%x, %y}];\n\
         tex.a2dms.v4.f32.s32 {%t0, %t1, %t2, %t3}, [table, {%x, %y}];\n",
    );
    let ins = instructions(&body);
    assert!(ins[0].unknown().is_none(), "{:?}", ins[0].unknown());
    assert!(ins[0].mods.has(Flag::D2));
    assert!(ins[1].mods.has(Flag::A2dms) && !ins[1].mods.has(Flag::D2));
    assert_eq!(ins[0].defs().len(), 4);
}
