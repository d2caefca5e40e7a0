/* dpacct command-line front end: command names and help texts.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <stdio.h>
#include <string.h>
#include "cli.h"

static const char *const command_names[CLI_NCOMMANDS] = {
    "epsilon", "delta", "profile", "calibrate", "renyi", "curve", "report", "dpsgd", "tail"
};

/* Defaults are the library's (dpa_options_init), filled in when printed. */
static const char common_options[] =
    "Accounting options (all commands):\n"
    "  --method M       auto (default), exact, pld, phi, rdp, clt or gdp; for\n"
    "                   epsilon, delta and curve also all (every method side by\n"
    "                   side). auto picks the tightest that applies: exact (closed\n"
    "                   forms) for Gaussian/GDP compositions, pure/RR/approx\n"
    "                   compositions and Poisson-subsampled RR, else pld, else\n"
    "                   rdp (specs with zcdp leaves). phi's bounds are estimates,\n"
    "                   not certified; rdp gives an upper bound only; clt is the\n"
    "                   Berry-Esseen envelope (certified, often loose); gdp is the\n"
    "                   CLT approximation (not a bound).\n"
    "  --rdp-conversion C  optimal (default), improved or classical: how the rdp\n"
    "                   method converts Renyi DP to (epsilon, delta)\n"
    "  --accuracy A     requested relative accuracy of the bracket, in [1e-8, 1]\n"
    "                   (default %g)\n"
    "  --grid-step S    fixed PLD grid step, 0 (automatic, default) or in [1e-7, 1]\n"
    "  --max-grid N     largest PLD FFT length, integer in [1024, 67108864]\n"
    "                   (default %zu)\n"
    "  --threads N      threads for the PLD compositions, 0 (default: the online\n"
    "                   processors, at most 4) or 1 to 64; results do not depend on it\n"
    "  --json           print one JSON object instead of text; errors too are then\n"
    "                   one JSON object on standard error:\n"
    "                   {\"error\": {\"message\", \"path\", \"exit_status\"}}\n"
    "  -h, --help       print this help and exit\n";

static const char spec_note[] =
    "\n"
    "SPEC is a JSON event spec (docs/spec.md): a file path, - for standard\n"
    "input, or the JSON text itself (an argument starting with '{').\n"
    "Options may come before or after SPEC, as --opt value or --opt=value;\n"
    "-- ends the options.\n";

static const char main_help_head[] =
    "Usage: dpacct COMMAND [OPTIONS] SPEC\n"
    "       dpacct dpsgd --dataset-size N --batch-size B (--epochs E | --steps T)\n"
    "                    --noise S --delta D [--epsilon X] [OPTIONS]\n"
    "       dpacct help [COMMAND] | --help | --version | COMMAND --help\n"
    "\n"
    "Certified differential-privacy accounting: every result is an interval\n"
    "[lower, upper] that contains the true value; claim the upper bound.\n"
    "\n"
    "Commands:\n"
    "  epsilon    --delta D[,D2,...]        bounds on epsilon at delta D (each D)\n"
    "  delta      --epsilon E[,E2,...]      bounds on delta at epsilon E (each E)\n"
    "  profile    --from E0 --to E1 [--points N] [--log]\n"
    "                                       delta bounds at N evenly (or log-)\n"
    "                                       spaced epsilons\n"
    "  calibrate  --epsilon E --delta D [--tolerance T]\n"
    "                                       value of the \"?\" parameter meeting\n"
    "                                       epsilon <= E at delta D\n"
    "  renyi      --order A                 Renyi divergence of order A (real > 0,\n"
    "                                       or complex like 1.5+2i)\n"
    "  curve      [--kind profile|tradeoff|renyi] [--format csv|json|svg|png|pdf]\n"
    "                                       the whole curve, as a table or a plot\n"
    "  report     [-o FILE]                 an HTML page a person reads\n"
    "  dpsgd      --dataset-size N --batch-size B --epochs E|--steps T --noise S\n"
    "             --delta D [--epsilon X]   epsilon of a DP-SGD run, or with\n"
    "                                       --epsilon the noise, epochs/steps or\n"
    "                                       batch size (the one left out) meeting X\n"
    "  bandmf     --coefficients L|--bands B --noise S --iterations N\n"
    "             --rate Q|--epochs K --delta D [--epsilon X]\n"
    "                                       epsilon of banded matrix factorization\n"
    "                                       (DP-BandMF), or the noise meeting X\n"
    "                                       (dpacct bandmf --help)\n"
    "  ledger     init|add-unit|request|status|history|verify|export|import PATH\n"
    "                                       a durable privacy-budget ledger with\n"
    "                                       privacy filters (dpacct ledger --help)\n"
    "  tail       --loss T [--direction remove|add]\n"
    "                                       bounds on P(L > T) and P(L <= T), L the\n"
    "                                       privacy loss\n"
    "  serve      --ledger PATH|URI [--listen ADDR:PORT]\n"
    "                                       the ledger as an HTTP JSON service\n"
    "                                       (dpacct serve --help)\n"
    "  help       [COMMAND]                 this help, or the help of COMMAND\n"
    "\n";

static const char main_help_tail[] =
    "\n"
    "Exit status: 0 success, 1 failure (numerical, out of memory, output),\n"
    "2 bad input (usage, option value, spec, unreadable SPEC file).\n"
    "\n"
    "Example:\n"
    "  dpacct epsilon --delta 1e-5 '{\"repeat\": {\"count\": 14063, \"event\":\n"
    "      {\"poisson\": {\"rate\": 0.0042666667, \"event\": {\"gaussian\": {\"sigma\": 1.1}}}}}}'\n"
    "\n"
    "  dpacct dpsgd --dataset-size 60000 --batch-size 256 --epochs 60 --noise 1.1 --delta 1e-5\n"
    "\n"
    "Run 'dpacct help COMMAND' (or 'dpacct COMMAND --help') for the options of a\n"
    "command; 'man dpacct' for the manual.\n";

static const char *const command_help[CLI_NCOMMANDS] = {
    "Usage: dpacct epsilon --delta D [OPTIONS] SPEC\n"
    "\n"
    "Certified bounds on the smallest epsilon such that the spec is\n"
    "(epsilon, D)-DP: epsilon_lower <= epsilon <= epsilon_upper. epsilon_upper\n"
    "is printed rounded up, epsilon_lower rounded down. An epsilon of inf means\n"
    "the privacy loss is +inf with probability >= D.\n"
    "\n"
    "  --delta D        required, in [0, 1) (0: pure DP, the largest privacy\n"
    "                   loss); several as D1,D2,... (one accountant,\n"
    "                   a result per delta; --json then prints {\"results\": [...]})\n"
    "  --format F       text (default), csv (a header row, then one row per delta:\n"
    "                   method,delta,epsilon_upper,epsilon_lower,binding_direction,\n"
    "                   epsilon_upper_remove,epsilon_upper_add,upper_source,certified,\n"
    "                   accuracy_met; exact doubles) or json (the same as --json)\n"
    "  --gdp-mu         also bracket the smallest mu for which the spec is mu-GDP\n"
    "                   (GDP Def 2.4): certified for Gaussian compositions and\n"
    "                   bounded losses (method exact), a lower bound under pld,\n"
    "                   nothing under phi, rdp and gdp. Costs a ladder of further\n"
    "                   queries (under pld often more than the epsilon itself)\n",

    "Usage: dpacct delta --epsilon E [OPTIONS] SPEC\n"
    "\n"
    "Certified bounds on delta(E), the smallest delta such that the spec is\n"
    "(E, delta)-DP. delta_upper is printed rounded up, delta_lower rounded down.\n"
    "\n"
    "  --epsilon E      required, any finite number (negative too); several as\n"
    "                   E1,E2,... (one accountant, a result per epsilon)\n"
    "  --format F       text (default), csv (method,epsilon,delta_upper,delta_lower,\n"
    "                   binding_direction,delta_upper_remove,delta_upper_add,\n"
    "                   upper_source,certified,accuracy_met) or json (= --json)\n",

    "Usage: dpacct profile --from E0 --to E1 [--points N] [--log] [OPTIONS] SPEC\n"
    "\n"
    "Certified bounds on delta(epsilon) at N evenly spaced epsilons from E0\n"
    "to E1 (both included): a table epsilon, delta_upper, delta_lower.\n"
    "\n"
    "  --from E0        required, finite, less than E1 (> 0 with --log)\n"
    "  --to E1          required, finite\n"
    "  --points N       integer in [2, 1000000] (default 21)\n"
    "  --log            log-spaced epsilons: E0 (E1/E0)^(i/(N-1))\n"
    "  --format F       text (default), csv (method,epsilon,delta_upper,delta_lower;\n"
    "                   exact doubles) or json (= --json)\n",

    "Usage: dpacct calibrate --epsilon E --delta D [--tolerance T] [OPTIONS] SPEC\n"
    "\n"
    "SPEC is a template: a spec with exactly one numeric parameter written \"?\".\n"
    "Finds the smallest noise (sigma, scale) or the largest other value\n"
    "(count, rate, epsilon, ...) whose certified epsilon_upper at delta D is\n"
    "<= E. Integer parameters stay integers. A noise value is printed rounded\n"
    "up, any other value rounded down, so the printed value meets the target.\n"
    "\n"
    "  --epsilon E      required, > 0\n"
    "  --delta D        required, in [0, 1) (0: pure DP)\n"
    "  --tolerance T    relative width of the final search bracket, in\n"
    "                   [1e-12, 0.1] (default 1e-4)\n",

    "Usage: dpacct renyi --order A [--json] SPEC\n"
    "\n"
    "The Renyi divergence of order A of the composition, both directions\n"
    "(remove: D_A(P||Q), add: D_A(Q||P)), where it exists. A is a real number\n"
    "> 0 (A = 1: the KL divergence) or a complex number written like 1.5+2i\n"
    "(real part > 0); complex orders give the analytic continuation from the\n"
    "real axis (docs/rdp.md). Real orders > 1 are certified upper bounds;\n"
    "the output says which values are estimates.\n"
    "\n"
    "  --order A        required: a real number > 0, or RE+IMi / RE-IMi\n",

    "Usage: dpacct curve [--kind K] [--format F] [-o FILE] [OPTIONS] SPEC [SPEC...]\n"
    "\n"
    "The whole guarantee as a table or a plot, for one method or (--method all)\n"
    "every applicable method overlaid.\n"
    "  profile   delta(epsilon): certified upper and lower bounds on an epsilon grid\n"
    "  tradeoff  a certified lower bound on the tradeoff curve: the smallest type II\n"
    "            error beta of any test with type I error alpha (membership\n"
    "            inference cannot do better); --at X gives one point\n"
    "  renyi     the Renyi divergence D_alpha of both directions on an order grid\n"
    "\n"
    "  --kind K         profile (default), tradeoff or renyi\n"
    "  --format F       csv (default), json, svg, png or pdf; default from the -o\n"
    "                   extension (.svg, .png, .pdf, .json), else csv\n"
    "  -o, --output F   write to file F (required for png and pdf); default\n"
    "                   standard output\n"
    "  --from X, --to Y the x range (profile: epsilon, default 0 to where delta\n"
    "                   reaches 1e-10; tradeoff: alpha, default 0 to 1; renyi:\n"
    "                   order, default 1.05 to 64)\n"
    "  --points N       grid points, integer in [2, 1000000] (default 101)\n"
    "  --at X           tradeoff only: the lower bound on beta at alpha = X in [0, 1]\n"
    "\n"
    "Tradeoff operations (--kind tradeoff; applied in this order, each keeps the\n"
    "curve a certified lower bound; docs/fdp.md):\n"
    "  --subsample P    C_p: the mechanism run on a subsample of m of n records,\n"
    "                   P = m/n in (0, 1] (GDP Thm 4.2)\n"
    "  --group K        group privacy: datasets that differ in K records,\n"
    "                   1 - (1 - f)^{o K} (GDP Thm 2.14), K in [1, 1048576]\n"
    "  --inverse        the inverse tradeoff function f^-1 (GDP eq 4)\n"
    "  --symmetrize     max{f, f^-1} (GDP Prop 2.1)\n"
    "\n"
    "Figures (svg, png, pdf): certified curves are drawn on top of estimates;\n"
    "SVG keeps its text as text.  Several SPECs are drawn on one plot.\n"
    "  --title T        the title (default: the kind's name)\n"
    "  --size WxH       the size in points (1/72 inch), each in [200, 5000]\n"
    "                   (default 760x500)\n"
    "  --dpi D          PNG resolution in [36, 1200] (default 72): W*D/72 pixels wide\n"
    "  --log-scale A    log axes: none, x, y or xy (default: y for profile and\n"
    "                   renyi, none for tradeoff); a log x axis needs --from > 0\n"
    "  --label L1,L2    legend labels, one per SPEC (default: each spec's \"name\",\n"
    "                   else its file name)\n",

    "Usage: dpacct report [-o FILE] [OPTIONS] SPEC\n"
    "\n"
    "One self-contained HTML page (inline SVG, no scripts, no network): epsilon\n"
    "at a ladder of deltas, every method side by side, what the tradeoff curve\n"
    "says about membership inference, the privacy profile, the tradeoff curve\n"
    "against the diagonal, the Renyi curve, and the spec.\n"
    "\n"
    "  -o, --output F   write to file F (default standard output)\n",

    "Usage: dpacct dpsgd --dataset-size N --batch-size B (--epochs E | --steps T)\n"
    "                    --noise S --delta D [--sampling M] [OPTIONS]\n"
    "       dpacct dpsgd ... --epsilon X   (leave out --noise, --batch-size or\n"
    "                                       --epochs/--steps: that one is calibrated)\n"
    "\n"
    "The privacy of a DP-SGD training run: T steps, each adding Gaussian noise of\n"
    "standard deviation S * C to the sum of per-example gradients clipped to norm C.\n"
    "Takes no SPEC: the spec is built from the options (--json prints it) and run\n"
    "as 'dpacct epsilon' runs a spec, so the two agree exactly.\n"
    "  Step count: T = ceil(E * N / B) (a quotient within 1e-9 of an integer is\n"
    "  that integer), or T given with --steps; for random_allocation and\n"
    "  shuffle T = E * t with t = ceil(N / B) steps per epoch (whole epochs).\n"
    "  Sampling: poisson (default): each example in each step's batch with\n"
    "  probability q = B/N, add/remove neighbours:\n"
    "    repeat(T, poisson(q, gaussian(sigma = S)))\n"
    "  without_replacement: every step a batch of exactly B drawn uniformly and\n"
    "  independently, replace-one neighbours:\n"
    "    repeat(T, sample(N, B, gaussian(sigma = S, sensitivity = 2)))\n"
    "  random_allocation (balls in bins): each example in exactly one of the t\n"
    "  steps of each epoch, chosen uniformly; add/remove neighbours:\n"
    "    repeat(E, random_allocation(t, 1, gaussian(sigma = S)))\n"
    "  shuffle: one permutation per epoch cut into batches of B; replace-one\n"
    "  neighbours; a certified bracket from two pairs: upper with no\n"
    "  amplification, repeat(ceil(T / t), gaussian(sigma = S, sensitivity = 2)),\n"
    "  lower from Chua et al.'s pair of datasets (random allocation of a shift\n"
    "  2C over each complete epoch's batches); calibration meets the upper end.\n"
    "With --epsilon X: the smallest noise multiplier, the largest step count\n"
    "(reported as steps, as epochs T * B / N and as whole epochs) or the largest\n"
    "batch size (an integer search over B; with --epochs the step count moves\n"
    "with B) whose certified epsilon at D is <= X.\n"
    "\n"
    "  --dataset-size N required, integer in [1, 1e15]\n"
    "  --batch-size B   integer in [1, N] (expected batch size under poisson)\n"
    "  --epochs E       number > 0 (T = ceil(E * N / B); whole for\n"
    "                   random_allocation and shuffle); or\n"
    "  --steps T        integer in [1, 1e15]\n"
    "  --noise S        noise multiplier, number > 0\n"
    "  --delta D        required, in (0, 1)\n"
    "  --epsilon X      calibrate the one quantity left out to epsilon <= X (> 0)\n"
    "  --sampling M     poisson (default), without_replacement,\n"
    "                   random_allocation or shuffle\n"
    "  --tolerance T    noise calibration: relative width of the final bracket,\n"
    "                   in [1e-12, 0.1] (default 1e-4)\n"
    "  --gdp-mu         (without --epsilon) also a lower bound on the smallest mu\n"
    "                   for which the run is mu-GDP, as 'dpacct epsilon --gdp-mu'\n",
    "Usage: dpacct tail --loss T [--direction remove|add] [OPTIONS] SPEC\n"
    "\n"
    "Bounds on the tail of the privacy loss L = log dP/dQ under P at T (the\n"
    "survival function P(L > T), +inf losses included) and on its CDF\n"
    "P(L <= T) = 1 - P(L > T), from the method's delta bounds (the hockey-stick\n"
    "curve is convex; docs/loss_tail.md). Certified under exact, pld, rdp and\n"
    "clt (wider where the method has no lower delta bounds for the direction);\n"
    "estimates under phi and gdp.\n"
    "\n"
    "  --loss T         required, a finite number\n"
    "  --direction D    remove (default: P with the individual's data, Q without)\n"
    "                   or add (the reversed pair)\n",
};

static const char *const command_example[CLI_NCOMMANDS] = {
    "  dpacct epsilon --delta 1e-5 '{\"gaussian\": {\"sigma\": 1}}'\n"
    "  dpacct epsilon --delta 1e-5 --gdp-mu '{\"repeat\": {\"count\": 3, \"event\":\n"
    "      {\"gaussian\": {\"sigma\": 2}}}}'\n"
    "  dpacct epsilon --delta=1e-6 --method pld --json dpsgd.json\n"
    "  dpacct epsilon --delta 1e-5,1e-6,1e-7 --format csv dpsgd.json\n",
    "  dpacct delta --epsilon 1 '{\"gaussian\": {\"sigma\": 1}}'\n"
    "  cat dpsgd.json | dpacct delta --epsilon 2 --json -\n",
    "  dpacct profile --from 0 --to 2 --points 5 '{\"gaussian\": {\"sigma\": 1}}'\n"
    "  dpacct profile --log --from 0.01 --to 10 --points 4 --format csv dpsgd.json\n",
    "  dpacct calibrate --epsilon 1 --delta 1e-5 '{\"gaussian\": {\"sigma\": \"?\"}}'\n"
    "  dpacct calibrate --epsilon 2 --delta 1e-5 '{\"repeat\": {\"count\": \"?\",\n"
    "      \"event\": {\"gaussian\": {\"sigma\": 10}}}}'\n",
    "  dpacct renyi --order 2 '{\"gaussian\": {\"sigma\": 1}}'\n"
    "  dpacct renyi --order 1.5+2i --json dpsgd.json\n",
    "  dpacct curve --kind profile --method all -o profile.svg dpsgd.json\n"
    "  dpacct curve --kind tradeoff --at 0.1 dpsgd.json\n",
    "  dpacct report -o report.html dpsgd.json\n",
    "  dpacct dpsgd --dataset-size 60000 --batch-size 256 --epochs 60 --noise 1.1 --delta 1e-5\n"
    "  dpacct dpsgd --dataset-size 60000 --batch-size 256 --epochs 60 --delta 1e-5 --epsilon 1\n"
    "  dpacct dpsgd --dataset-size 60000 --batch-size 256 --noise 1.1 --delta 1e-5 --epsilon 8\n",
    "  dpacct tail --loss 0.5 '{\"gaussian\": {\"sigma\": 1}}'\n"
    "  dpacct tail --loss 0 --direction add --json dpsgd.json\n",
};

const char *cli_command_name(cli_command c)
{
    return (unsigned)c < CLI_NCOMMANDS ? command_names[c] : "?";
}

int cli_command_lookup(const char *name)
{
    for (int i = 0; i < CLI_NCOMMANDS; i++)
        if (!strcmp(name, command_names[i]))
            return i;
    return -1;
}

static void print_common_options(void)
{
    dpa_options o;
    dpa_options_init(&o);
    printf(common_options, o.accuracy, o.max_grid);
}

void cli_print_main_help(void)
{
    fputs(main_help_head, stdout);
    print_common_options();
    fputs("  --version        print the version (and the library's) and exit\n", stdout);
    fputs(spec_note, stdout);
    fputs(main_help_tail, stdout);
}

void cli_print_command_help(cli_command c)
{
    fputs(command_help[c], stdout);
    putchar('\n');
    if (c == CLI_RENYI)
        fputs("  --json           print one JSON object instead of text\n"
              "  -h, --help       print this help and exit\n", stdout);
    else
        print_common_options();
    if (c != CLI_DPSGD)
        fputs(spec_note, stdout);
    fputs("\nExamples:\n", stdout);
    fputs(command_example[c], stdout);
}

void cli_print_try_help(int cmd)
{
    if (cli_json_errors()) /* standard error holds one JSON object */
        return;
    if (cmd >= 0 && cmd < CLI_NCOMMANDS)
        fprintf(stderr, "Try 'dpacct %s --help'.\n", command_names[cmd]);
    else
        fputs("Try 'dpacct --help'.\n", stderr);
}
