"""Heads, losses and metrics on hand-computed tensors."""

from __future__ import annotations

import math

import pytest
import torch

from pragmeter.impscore.heads import HeadsConfig, ImpScoreHeads
from pragmeter.impscore.losses import ImpScoreLoss, margin_losses, triplet_outputs
from pragmeter.impscore.accuracy import per_source_metrics, triplet_metrics


def swap_heads(**kwargs) -> ImpScoreHeads:
    """W_p = W_s = I, W_t swaps the two coordinates."""
    heads = ImpScoreHeads(HeadsConfig(embedding_dim=2, dim=2, **kwargs))
    with torch.no_grad():
        heads.W_p.copy_(torch.eye(2))
        heads.W_s.copy_(torch.eye(2))
        heads.W_t.copy_(torch.tensor([[0.0, 1.0], [1.0, 0.0]]))
    return heads


E1, E2, E3 = torch.tensor([[1.0, 0.0]]), torch.tensor([[1.0, 1.0]]), torch.tensor([[1.0, -1.0]])


def test_implicitness_is_one_minus_cosine_of_semantic_and_mapped_pragmatic():
    heads = swap_heads()
    # e1: h_s = [1,0], mapped h_p = [0,1] -> cos 0 -> I 1; e2: [1,1] vs [1,1] -> 0; e3: [1,-1] vs [-1,1] -> 2
    scores = heads(torch.cat([E1, E2, E3]))[0]
    assert scores.tolist() == pytest.approx([1.0, 0.0, 2.0], abs=1e-6)


def test_loss_terms_match_hand_computation():
    heads = swap_heads()
    out = triplet_outputs(heads, E1, E2, E3)
    assert out.distance_positive.item() == pytest.approx(1.0)  # ‖[1,0] − [1,1]‖
    assert out.distance_negative.item() == pytest.approx(1.0)  # ‖[1,0] − [1,−1]‖
    terms = margin_losses(out, gamma1=0.5, gamma2=0.7, alpha=1.0)
    assert terms["imp_pos"].item() == pytest.approx(0.0)  # max(0, 0.5 − (1 − 0))
    assert terms["imp_neg"].item() == pytest.approx(1.5)  # max(0, 0.5 − (1 − 2))
    assert terms["prag"].item() == pytest.approx(0.7)  # max(0, 0.7 − (1 − 1))
    assert ImpScoreLoss(heads)(E1, E2, E3).item() == pytest.approx(2.2)
    assert ImpScoreLoss(heads, alpha=2.0)(E1, E2, E3).item() == pytest.approx(2.9)


def test_variants_follow_their_definitions():
    s2p = swap_heads(transform="s2p")  # ĥ_p = h_s W_t compared with h_p: same numbers here by symmetry
    assert s2p(E1)[0].item() == pytest.approx(1.0)
    euclid = swap_heads(imp_metric="euclidean")
    assert euclid(E1)[0].item() == pytest.approx(math.sqrt(2))  # ‖[1,0] − [0,1]‖
    both = swap_heads(transform="both")
    with torch.no_grad():
        both.W_t2.copy_(torch.eye(2))
    assert both(E1)[0].item() == pytest.approx(1.0)  # 1 − cos([0,1], [1,0])
    cosine_prag = swap_heads(prag_metric="cosine")
    out = triplet_outputs(cosine_prag, E1, E2, E3)
    assert out.distance_positive.item() == pytest.approx(1 - 1 / math.sqrt(2))


def test_unknown_variant_is_rejected():
    with pytest.raises(ValueError, match="transform"):
        HeadsConfig(embedding_dim=2, transform="p2x")


def test_xavier_uniform_bounds():
    heads = ImpScoreHeads(HeadsConfig(embedding_dim=768, dim=64))
    bound_p = math.sqrt(6 / (768 + 64))
    bound_t = math.sqrt(6 / (64 + 64))
    assert heads.W_p.abs().max().item() <= bound_p
    assert heads.W_t.abs().max().item() <= bound_t
    assert heads.W_p.abs().max().item() > 0.9 * bound_p


def test_metrics_count_both_pairs_and_pragmatics():
    heads = swap_heads()
    # triplet A (E1,E2,E3): I1=1 > I2=0 (right), I1 < I3=2 (wrong); ΔP+ = ΔP− (not strictly smaller: wrong)
    # triplet B (E3,E2,E1): I1=2 > 0 and > 1 (both right); ΔP+ = ‖[1,-1]−[1,1]‖ = 2 > ΔP− = 1 (wrong)
    out = triplet_outputs(heads, torch.cat([E1, E3]), torch.cat([E2, E2]), torch.cat([E3, E1]))
    metrics = triplet_metrics(out)
    assert metrics["implicitness_accuracy"] == pytest.approx(3 / 4)
    assert metrics["pragmatics_accuracy"] == pytest.approx(0.0)
    assert metrics["mean_I_implicit"] == pytest.approx(1.5)
    table = per_source_metrics(out, ["a", "b"]).set_index("source")
    assert table.loc["a", "implicitness_accuracy"] == pytest.approx(0.5)
    assert table.loc["b", "implicitness_accuracy"] == pytest.approx(1.0)


def test_pairs_without_a_paraphrase_skip_the_pragmatic_term_and_metric():
    heads = swap_heads()
    e1, e2, e3 = torch.cat([E1, E1]), torch.cat([E2, 2 * E1]), torch.cat([E3, E2 + E2])
    out = triplet_outputs(heads, e1, e2, e3)
    # row 0 as before: ΔP+ = ΔP− = 1 (wrong); row 1: ΔP+ = 1 < ΔP− = ‖[1,0]−[2,2]‖ = √5 (right)
    assert triplet_metrics(out)["pragmatics_accuracy"] == pytest.approx(0.5)
    mask = torch.tensor([False, True])
    masked = triplet_metrics(out, mask)
    assert masked["pragmatics_accuracy"] == pytest.approx(1.0) and masked["n_pragmatic"] == 1
    assert masked["implicitness_accuracy"] == triplet_metrics(out)["implicitness_accuracy"]  # both rows count
    table = per_source_metrics(out, ["a", "b"], torch.tensor([False, True])).set_index("source")
    assert math.isnan(table.loc["a", "pragmatics_accuracy"]) and table.loc["b", "pragmatics_accuracy"] == 1.0
    terms = margin_losses(out)
    full = ImpScoreLoss(heads)(e1, e2, e3)
    only_row_1 = ImpScoreLoss(heads)(e1, e2, e3, mask)
    assert (full - only_row_1).item() == pytest.approx(terms["prag"][0].item() / 2)  # row 0's 0.7, batch mean


def test_in_batch_hardest_margin_uses_the_nearest_other_explicit_side_and_skips_paraphrases():
    from pragmeter.impscore.losses import in_batch_hardest_margin

    heads = swap_heads()  # pragmatic features = the embeddings themselves
    # Pair 0's own explicit side is at distance 1; pair 1's explicit side is at distance 0.5 from pair 0's implicit
    # sentence (a closer negative); pair 1 is far from everything else.
    e1 = torch.tensor([[0.0, 1.0], [5.0, -5.0]])
    e2 = torch.tensor([[1.0, 1.0], [0.0, 1.5]])
    margin = in_batch_hardest_margin(heads, e1, e2, gamma2=0.7)
    # pair 0: max(0, 0.7 − (0.5 − 1)) = 1.2; pair 1: own side at √(25 + 42.25), pair 0's at √(16 + 36), nearer:
    # max(0, 0.7 − (7.21 − 8.20)) ≈ 1.69
    expected = (1.2 + max(0.0, 0.7 - (math.sqrt(52.0) - math.sqrt(67.25)))) / 2
    assert margin.item() == pytest.approx(expected, rel=1e-5)
    # A pair whose explicit side paraphrases pair 0's (encoder cosine >= 0.8) is not a negative: only the own side is left.
    e2_paraphrase = torch.tensor([[1.0, 1.0], [1.0, 1.1]])
    assert in_batch_hardest_margin(heads, e1[:2], e2_paraphrase, gamma2=0.7).item() == pytest.approx(0.0)


def test_in_batch_weight_zero_is_the_papers_objective_and_a_positive_weight_adds_the_margin():
    from pragmeter.impscore.losses import in_batch_hardest_margin

    heads = swap_heads()
    e1, e2, e3 = torch.tensor([[0.0, 1.0], [5.0, -5.0]]), torch.tensor([[1.0, 1.0], [0.0, 1.5]]), torch.tensor([[1.0, -1.0], [2.0, 2.0]])
    paper = ImpScoreLoss(heads)(e1, e2, e3)
    assert ImpScoreLoss(heads)(e1, e2, e3, in_batch=0.0).item() == paper.item()
    torch.manual_seed(0)
    with_term = ImpScoreLoss(heads)(e1, e2, e3, in_batch=0.5)
    assert with_term.item() == pytest.approx(paper.item() + 0.5 * in_batch_hardest_margin(heads, e1, e2, 0.7).item(), rel=1e-6)
