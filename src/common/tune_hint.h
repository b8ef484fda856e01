/* The info hint that exempts a communicator from libmpiguide-tune: a communicator made by
   MPI_Comm_dup_with_info with TUNE_HINT_KEY set to TUNE_HINT_OFF has every collective call left
   to the MPI library (docs/tuning.md, "The tuning file of libmpiguide-tune"). The kernel
   gives it to the experiments of algorithm `untuned` (docs/kernel.md, "Algorithms per
   experiment"), so that they run the library's own call beside the replaced one in the same
   launch. Held here because both read it: src/tune and src/kernel. */
#ifndef MPIGUIDE_TUNE_HINT_H
#define MPIGUIDE_TUNE_HINT_H

#define TUNE_HINT_KEY "mpiguide_tune"
#define TUNE_HINT_OFF "off"

#endif
